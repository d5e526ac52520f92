"""asv noise suite: actor-noise generation variants (rlperf.envs.noise), one step of 64 values per env.

`track_ms` returns synchronised wall-clock samples as `{"samples": [...]}` so asv computes the statistics
(costs in ms: lower is better). Points come from rlperf.envs.noise.cases (motion-tracking columns, both
distributions; the probe's Gaussian columns are the same shape). Single-threaded variants and thread
counts above the machine raise NotImplementedError with the reason (asv shows n/a). Numba compiles (or
loads from cache) in setup, never inside the timed samples.
"""

from __future__ import annotations

from ._suite import skip_point
from rlperf.envs.noise import cases
from rlperf.gate.meta import higher_is_better

TASK = "g1_motion_tracking"


class NoiseGeneration:
    """ms per step of noise for (variant, dist, envs, threads)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    params = (list(cases.VARIANTS), list(cases.DISTS), list(cases.ASV_NUM_ENVS), list(cases.ASV_THREADS))
    param_names = ("variant", "dist", "num_envs", "threads")
    unit = "ms"
    timeout = 600
    number = 1
    repeat = 1
    rounds = 1

    def setup(self, variant, dist, num_envs, threads):
        from rlperf.envs import threads as pools

        reason = cases.skip_reason(variant, threads, pools.max_numba_threads())
        if reason:
            raise NotImplementedError(reason)
        self.case = cases.NoiseCase(TASK, variant, dist, num_envs, threads)

    def track_ms(self, variant, dist, num_envs, threads):
        from rlperf.envs.noise.measure import time_case

        return {"samples": time_case(self.case, iters=cases.ITERS, warmup=cases.WARMUP, seed=cases.SEED),
                "number": 1}


class _InKernelNoise:
    """A task's kernel with noise drawn in-kernel vs passed in, and vs numpy drawing the same values
    (rlperf.envs.noise_overhead: interleaved arms, min of rounds). Ratios are unitless. Subclasses set TASK
    (the leading underscore keeps asv from collecting this base). `track_numpy_path_over_in_kernel` is the
    one the gate's null-run sample takes: it has a value at every point, where the draws-only ratio is
    often n/a (a null run whose head skips a point base measured exits 4)."""

    TASK = ""
    params = (list(cases.ASV_NUM_ENVS), list(cases.ASV_THREADS))
    param_names = ("num_envs", "threads")
    timeout = 600
    number = 1
    repeat = 1
    rounds = 1

    def setup(self, num_envs, threads):
        from rlperf.envs import threads as pools
        from rlperf.envs.noise_overhead import measure

        if threads > pools.max_numba_threads():
            raise NotImplementedError(f"{threads} threads > {pools.max_numba_threads()} on this machine")
        self.result = measure(num_envs, threads, task=self.TASK, rounds=cases.ITERS, warmup=cases.WARMUP,
                              seed=cases.SEED)

    def track_overhead_ratio(self, num_envs, threads):
        return self.result["overhead_ratio"]

    track_overhead_ratio.unit = "in-kernel / passed"

    def track_numpy_over_in_kernel_draws(self, num_envs, threads):
        """numpy ms / (in-kernel ms - passed ms); n/a (a skip, not a failure) when that difference is not
        above zero, i.e. the draws' cost is inside the two minima's noise at this point."""
        value = self.result["numpy_over_in_kernel_draws"]
        if value is None:
            skip_point("in-kernel draws cost nothing measurable at this point (in-kernel ms <= passed ms)")
        return value

    track_numpy_over_in_kernel_draws.unit = "numpy / in-kernel draws"

    @higher_is_better
    def track_numpy_path_over_in_kernel(self, num_envs, threads):
        """(numpy draws ms + passed ms) / in-kernel ms: how many times faster a whole step is with the draws
        in the kernel; a value at every point (envs.noise_overhead.numpy_path_over_in_kernel)."""
        return self.result["numpy_path_over_in_kernel"]

    track_numpy_path_over_in_kernel.unit = "(numpy draws + passed) / in-kernel"


class ProbeInKernelNoise(_InKernelNoise):
    """The probe kernel with noise drawn in-kernel vs passed in, and vs numpy drawing the same values."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    TASK = "probe"


class MotionTrackingInKernelNoise(_InKernelNoise):
    """g1_motion_tracking's kernel with its 64 actor-noise values drawn in-kernel vs passed in, and vs numpy."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    TASK = "g1_motion_tracking"
