"""asv env suite: fused Numba update_state kernels against their numpy references.

Thin classes: every parameter list comes from rlperf.envs.cases (RLPERF_ASV_FULL=1 widens the sweep),
every measurement from rlperf.envs.harness / parity. Kernels compile (or load from Numba's cache) in
setup, never inside a timed call; prepared state is cached per parameter tuple on the class, because
asv_runner 0.3 re-runs setup before every timed call. Infeasible points raise NotImplementedError with
the reason (asv shows n/a).

For the gate, decorators from rlperf.gate.meta say how to read each benchmark: asv treats every number as
lower-is-better, but `track_speedup_vs_numpy` is a ratio where higher is better, and the parity tracks
are absolute differences judged against the workload's tolerance, not as ratios between commits.
"""

from __future__ import annotations

from rlperf.envs import cases
from rlperf.gate.meta import higher_is_better, within_tolerance

_P = cases.asv_params()
_PARITY_FIELDS = {  # track name suffix -> (ParityResult field, Tolerances field or None for exact)
    "reward": ("max_abs_reward_diff", "reward_atol"),
    "log": ("max_abs_log_diff", "log_atol"),
    "actor_obs": ("max_abs_actor_obs_diff", "obs_atol"),
    "critic_obs": ("max_abs_critic_obs_diff", "obs_atol"),
    "termination_mismatch": ("termination_mismatch", None),
    "failures": ("failures", None),  # number of failed checks under the full rtol + atol test (0 = ok)
}


def _tolerances() -> dict:
    """Per task, the absolute tolerance of each parity track (None: the task cannot load here)."""
    from rlperf.envs import registry
    from rlperf.errors import UsageError

    out = {}
    for task in registry.TASKS:
        try:
            tol = registry.get(task).tolerances
        except UsageError:
            out[task] = None
            continue
        out[task] = {name: (0 if field is None else getattr(tol, field))
                     for name, (_, field) in _PARITY_FIELDS.items()}
    return out


# The gate reads each benchmark's direction from the function itself (rlperf.gate.meta): the speedup is
# higher-is-better; parity tracks are judged against the workload's absolute tolerance per task (0 for
# the count tracks), never as ratios between commits. Everything else is a cost: lower is better.
PARITY_TOLERANCES = _tolerances()


def _parity_tolerance(name: str) -> dict:
    """{task: absolute limit} of one parity track, for the tasks that load here."""
    return {task: tol[name] for task, tol in PARITY_TOLERANCES.items() if tol is not None} or {"none": 0.0}


class _EnvBench:
    """Shared setup: prepare the task once per process, build inputs once per parameter tuple."""

    timeout = 600  # a cold Numba compile takes seconds; asv's default is 60 s
    # Bounded statistics without --quick: one process per point, 5-20 samples within about a second.
    rounds = 1
    repeat = (5, 20, 1.0)
    _prepared: dict = {}
    _inputs: dict = {}

    def _prepare(self, task):
        from rlperf.envs import harness
        from rlperf.errors import UsageError

        if task not in self._prepared:
            try:
                self._prepared[task] = harness.prepare(task)
            except UsageError as exc:
                raise NotImplementedError(str(exc)) from None
        return self._prepared[task]

    def _case(self, task, num_envs, threads=1, noise_level=1.0):
        from rlperf.envs import registry, threads as pools

        reason = cases.skip_reason(threads, pools.max_numba_threads())
        if reason:
            raise NotImplementedError(reason)
        prepared = self._prepare(task)
        key = (task, num_envs, noise_level)
        if key not in self._inputs:
            w = prepared.workload
            self._inputs[key] = w.make_inputs(num_envs, registry.default_profile(w), seed=cases.SEED,
                                              noise_level=noise_level)
        return prepared.workload, self._inputs[key]


class EnvReference(_EnvBench):
    """Numpy reference per (task, envs): the baseline the kernels are compared with."""

    params = (_P["task"], _P["num_envs"])
    param_names = ("task", "num_envs")

    def setup(self, task, num_envs):
        w, inputs = self._case(task, num_envs)
        self.call = lambda: w.reference(inputs)

    def time_reference(self, task, num_envs):
        self.call()


class EnvFused(_EnvBench):
    """Fused kernel per (task, envs, threads); compiled in setup, thread mask set on this thread."""

    params = (_P["task"], _P["num_envs"], _P["threads"])
    param_names = ("task", "num_envs", "threads")

    def setup(self, task, num_envs, threads):
        w, inputs = self._case(task, num_envs, threads)
        self.call = w.fused_runner(inputs, threads)
        self.call()  # one untimed call at this thread count (pool start-up)

    def time_fused(self, task, num_envs, threads):
        self.call()


class EnvSpeedup(_EnvBench):
    """numpy ms / numba ms (medians of a short run); higher is better (@higher_is_better)."""

    params = (_P["task"], _P["num_envs"], _P["threads"])
    param_names = ("task", "num_envs", "threads")
    unit = "numpy ms / numba ms"

    def setup(self, task, num_envs, threads):
        self.w, self.inputs = self._case(task, num_envs, threads)

    @higher_is_better
    def track_speedup_vs_numpy(self, task, num_envs, threads):
        from rlperf.envs import harness
        from rlperf.measure.stats import summarize

        sweep = cases.asv_sweep()
        ref = harness.time_reference(self.w, self.inputs, iters=sweep.iters, warmup=sweep.warmup)
        fused, _ = harness.time_fused(self.w, self.inputs, threads, iters=sweep.iters, warmup=sweep.warmup)
        return summarize(ref)["median_ms"] / summarize(fused)["median_ms"]

    track_speedup_vs_numpy.unit = unit


class EnvCompile(_EnvBench):
    """First call at 1 thread in a fresh process, in ms: a cache load when Numba's cache is warm."""

    params = (_P["task"],)
    param_names = ("task",)
    unit = "ms"

    def setup(self, task):
        self.prepared = self._prepare(task)

    def track_compile_ms(self, task):
        return self.prepared.compile_ms

    track_compile_ms.unit = unit


class EnvParity(_EnvBench):
    """Parity at noise level 0 and 1 thread (C6) on the coverage inputs: absolute diffs, judged against
    PARITY_TOLERANCES (the derived data file rlperf/envs/tolerances.json, rtol 0 there)."""

    params = (_P["task"], _P["parity_envs"])
    param_names = ("task", "num_envs")

    def setup(self, task, num_envs):
        from rlperf.envs import parity, registry

        key = ("parity", task, num_envs)
        if key not in self._inputs:  # coverage inputs (every term and termination branch), noise level 0
            w = self._prepare(task).workload
            self._inputs[key] = parity.check(w, registry.default_profile(w), num_envs, 1, seed=cases.SEED)
        self.result = self._inputs[key]

    def _value(self, name):
        value = getattr(self.result, _PARITY_FIELDS[name][0])
        return float(len(value) if isinstance(value, list) else value)

    @within_tolerance(_parity_tolerance("reward"))
    def track_parity_reward(self, task, num_envs):
        return self._value("reward")

    @within_tolerance(_parity_tolerance("log"))
    def track_parity_log(self, task, num_envs):
        return self._value("log")

    @within_tolerance(_parity_tolerance("actor_obs"))
    def track_parity_actor_obs(self, task, num_envs):
        return self._value("actor_obs")

    @within_tolerance(_parity_tolerance("critic_obs"))
    def track_parity_critic_obs(self, task, num_envs):
        return self._value("critic_obs")

    @within_tolerance(_parity_tolerance("termination_mismatch"))
    def track_parity_termination_mismatch(self, task, num_envs):
        return self._value("termination_mismatch")

    @within_tolerance(_parity_tolerance("failures"))
    def track_parity_failures(self, task, num_envs):
        return self._value("failures")

    for _name in ("reward", "log", "actor_obs", "critic_obs"):
        locals()[f"track_parity_{_name}"].unit = "abs diff"
    track_parity_termination_mismatch.unit = "count"
    track_parity_failures.unit = "count"
    del _name
