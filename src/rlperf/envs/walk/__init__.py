"""g1_walk_flat update_state workload (workloads.md C3, C5): inputs, numpy reference, fused kernel."""

from __future__ import annotations

from rlperf.envs.base import ChunkedKernelWorkload, Tolerances


class WalkWorkload(ChunkedKernelWorkload):
    """The G1 joystick walk kernel; ppo_default is timed as reward + termination only (other obs layout)."""

    name = "g1_walk_flat"
    profiles = ("ppo_default", "sac_default", "full_supported")
    default_profile = "sac_default"
    # The reference walk benchmark's enforced values (C6): reward 5e-5, obs 1e-6, logs 5e-5.
    tolerances = Tolerances(reward_rtol=5e-5, reward_atol=5e-5, log_rtol=5e-5, log_atol=5e-5,
                            obs_rtol=0.0, obs_atol=1e-6)
    obs_dim = 98
    critic_dim = 101
    bytes_per_env = 1670  # limits §3.8: 0.87 KB read + 0.80 KB written (2.47 KB with write-allocate)
    _inputs = "rlperf.envs.walk.inputs"
    _reference = "rlperf.envs.walk.reference"
    _fused = "rlperf.envs.walk.fused"
    kernel_name = "walk_update_state"

    @property
    def terms(self) -> tuple[str, ...]:
        from rlperf.envs.walk.inputs import TERMS

        return TERMS

    def scope(self, profile: str) -> str:
        return "reward+termination+logs (other obs layout, not built)" if profile == "ppo_default" \
            else "reward+termination+obs+logs"


WORKLOAD = WalkWorkload()
