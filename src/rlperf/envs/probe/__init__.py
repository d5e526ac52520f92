"""The 15-term env-overhead probe (docs/workloads.md D): inputs, numpy reference, fused float32 kernel."""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import ChunkedKernelWorkload


class ProbeWorkload(ChunkedKernelWorkload):
    """Rewards + termination + obs + logs + the 2% final-observation copy, all in float32.

    Both sides are float32 in the same term order, so obs (single ops on identical inputs) agree to the
    last bit; rewards differ by a few ulp (libm vs numpy-SIMD exp, reassociated adds). Tolerances are
    derived from those observed differences (rlperf.envs.tolerances).
    """

    name = "probe"
    profiles = ("default",)
    default_profile = "default"
    obs_dim = 98
    critic_dim = 101
    bytes_per_env = 1670  # docs/limits.md 3.8 walk/probe stream (plus the 2% final-obs copy, negligible)
    _inputs = "rlperf.envs.probe.inputs"
    _reference = "rlperf.envs.probe.reference"
    _fused = "rlperf.envs.probe.fused"
    kernel_name = "probe_update_state"

    def scope(self, profile: str) -> str:
        return "reward+termination+obs+logs+final-obs copy (2%)"

    def extra_outputs(self, inputs) -> dict[str, np.ndarray]:
        return {"final_actor_obs": np.zeros((inputs.num_done, self.obs_dim), dtype=np.float32),
                "final_critic_obs": np.zeros((inputs.num_done, self.critic_dim), dtype=np.float32)}


WORKLOAD = ProbeWorkload()
