"""g1_motion_tracking `update_state` workload: `WORKLOAD` satisfies rlperf.envs.base.EnvWorkload.

Importing this package compiles nothing; numba is imported only when the fused kernel is needed.
"""

from __future__ import annotations

from typing import Callable

from rlperf.envs.base import EnvOutputs, first_call_seconds, reduce_term_logs
from rlperf.envs.motion_tracking.inputs import ACTOR_DIM, CRITIC_DIM, MotionTrackingInputs, make_inputs
from rlperf.envs.motion_tracking.profiles import PROFILES, TERMS
from rlperf.envs.tolerances import Tolerances, load as load_tolerances


class MotionTrackingWorkload:
    """Inputs, numpy oracle and fused-kernel runner for G1 motion tracking (docs/workloads.md C2)."""

    name = "g1_motion_tracking"
    profiles = tuple(PROFILES)
    obs_dim = ACTOR_DIM
    critic_dim = CRITIC_DIM
    default_profile = "sac_default"
    terms = TERMS
    # docs/limits.md 3.8 streams as built here: 2432 B read + 1801 B written (6034 B with write-allocate)
    bytes_per_env = 4233

    def scope(self, profile: str) -> str:
        return "reward+termination+obs+logs"

    @property
    def tolerances(self) -> Tolerances:
        """Derived from observed differences (rlperf.envs.tolerances, scripts/derive_tolerances.py)."""
        return load_tolerances(self.name)

    @property
    def kernel(self):
        from rlperf.envs.motion_tracking.fused import update_state_kernel

        return update_state_kernel

    def make_inputs(
        self, num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0
    ) -> MotionTrackingInputs:
        return make_inputs(num_envs, profile, seed=seed, noise_level=noise_level)

    def reference(self, inputs: MotionTrackingInputs) -> EnvOutputs:
        from rlperf.envs.motion_tracking.reference import update_state

        return update_state(inputs)

    def kernel_args(self, inputs: MotionTrackingInputs) -> tuple:
        """The kernel's positional arguments for `inputs` (a variant kernel brings its own)."""
        from rlperf.envs.motion_tracking.fused import kernel_args

        return kernel_args(inputs)

    def fused_runner(self, inputs: MotionTrackingInputs, num_threads: int) -> Callable[[], EnvOutputs]:
        """Set Numba's thread mask here; `run` re-applies it because the mask is thread-local."""
        import numba

        kernel = self.kernel
        if not kernel.signatures:
            self.compile()
        numba.set_num_threads(num_threads)
        args = self.kernel_args(inputs)
        scales = inputs.profile.scales
        n = inputs.num_envs

        def run() -> EnvOutputs:
            numba.set_num_threads(num_threads)
            kernel(*args)
            return EnvOutputs(
                reward=inputs.reward,
                terminated=inputs.terminated,
                actor_obs=inputs.actor_obs,
                critic_obs=inputs.critic_obs,
                term_logs=reduce_term_logs(inputs.logs, TERMS, scales, n),
            )

        return run

    def compile(self) -> float:
        """First call at 1 thread on tiny inputs of the exact runtime types; seconds (compile or cache load)."""
        args = self.kernel_args(self.make_inputs(4, self.default_profile, noise_level=0.0))
        return first_call_seconds(self.kernel, args, f"{self.name}: {type(self).__name__}'s kernel")

    def compile_source(self) -> str:
        """'cache' if the kernel was loaded from Numba's cache, else 'compiled'."""
        return "cache" if sum(self.kernel.stats.cache_hits.values()) else "compiled"


WORKLOAD = MotionTrackingWorkload()

__all__ = ["WORKLOAD", "MotionTrackingWorkload"]
