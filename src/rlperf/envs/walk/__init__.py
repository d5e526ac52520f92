"""g1_walk_flat update_state workload (docs/workloads.md C3, C5): inputs, numpy reference, fused kernel."""

from __future__ import annotations

from rlperf.envs.base import ChunkedKernelWorkload


class WalkWorkload(ChunkedKernelWorkload):
    """The G1 joystick walk kernel; ppo_default is timed as reward + termination only (other obs layout)."""

    name = "g1_walk_flat"
    profiles = ("ppo_default", "sac_default", "full_supported")
    default_profile = "sac_default"
    obs_dim = 98
    critic_dim = 101
    bytes_per_env = 1670  # docs/limits.md 3.8: 0.87 KB read + 0.80 KB written (2.47 KB with write-allocate)
    _inputs = "rlperf.envs.walk.inputs"
    _reference = "rlperf.envs.walk.reference"
    _fused = "rlperf.envs.walk.fused"
    kernel_name = "walk_update_state"

    def scope(self, profile: str) -> str:
        return "reward+termination+logs (other obs layout, not built)" if profile == "ppo_default" \
            else "reward+termination+obs+logs"


WORKLOAD = WalkWorkload()
