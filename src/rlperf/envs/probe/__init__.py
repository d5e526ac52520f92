"""The 15-term env-overhead probe (workloads.md D): inputs, numpy reference, fused float32 kernel."""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import ChunkedKernelWorkload, Tolerances


class ProbeWorkload(ChunkedKernelWorkload):
    """Rewards + termination + obs + logs + the 2% final-observation copy, all in float32.

    Tolerances: both sides are float32 in the same term order, so obs (single ops on identical inputs)
    agree to the last bit and 1e-6 only absorbs an FMA contraction. Per-env rewards differ by a few ulp
    of the largest weighted term (alive 10 -> ~1e-6) from libm vs numpy-SIMD exp and reassociated adds,
    times ctrl_dt 0.02: atol 1e-6 + rtol 1e-5 leaves >10x margin. Log means are float64 reductions of
    float32 weighted terms: the same ulp-level differences averaged, so atol 1e-5 + rtol 1e-5.
    """

    name = "probe"
    profiles = ("default",)
    default_profile = "default"
    tolerances = Tolerances(reward_rtol=1e-5, reward_atol=1e-6, log_rtol=1e-5, log_atol=1e-5,
                            obs_rtol=0.0, obs_atol=1e-6)
    obs_dim = 98
    critic_dim = 101
    bytes_per_env = 1670  # limits §3.8 walk/probe stream (plus the 2% final-obs copy, negligible)
    _inputs = "rlperf.envs.probe.inputs"
    _reference = "rlperf.envs.probe.reference"
    _fused = "rlperf.envs.probe.fused"
    kernel_name = "probe_update_state"

    @property
    def terms(self) -> tuple[str, ...]:
        from rlperf.envs.probe.inputs import TERMS

        return TERMS

    def scope(self, profile: str) -> str:
        return "reward+termination+obs+logs+final-obs copy (2%)"

    def extra_outputs(self, inputs) -> dict[str, np.ndarray]:
        return {"final_actor_obs": np.zeros((inputs.num_done, self.obs_dim), dtype=np.float32),
                "final_critic_obs": np.zeros((inputs.num_done, self.critic_dim), dtype=np.float32)}


WORKLOAD = ProbeWorkload()
