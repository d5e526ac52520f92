"""LITERAL numpy probe update_state: one expression per term, as first written (kept for comparison).

The oracle is the fast version in reference.py; tests keep the two within the probe tolerances.

Same float32 term code as the walk reference plus the two probe-only terms, then the 2% final-obs copy.
"""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import EnvOutputs
from rlperf.envs.probe.inputs import TERMS, ProbeInputs
from rlperf.envs.walk import reference_literal as walk
from rlperf.envs.walk.inputs import P

F32 = np.float32


class ProbeTerms(walk.Terms):
    """Walk terms plus tracking_pose and penalty_action_smooth; penalty names alias the walk ones."""

    aliases = {**walk.Terms.aliases, "penalty_action_rate": "action_rate"}

    def tracking_pose(self):
        dev = self.inp.dof_pos - self.inp.default_angles.astype(F32)
        err = np.sum(np.square(dev) * self.inp.pose_weights.astype(F32), axis=1)
        return np.exp(-err / (F32(10) * self.p["tracking_sigma"]))

    def penalty_action_smooth(self):
        return np.sum(np.square(self.inp.actions), axis=1)


def update_state(inp: ProbeInputs) -> EnvOutputs:
    """Rewards, terminations, obs, per-term log means, then the final-observation copy of done rows."""
    n = inp.num_envs
    with np.errstate(invalid="ignore", over="ignore"):
        reward, logs = walk.reward_and_logs(ProbeTerms(inp), TERMS, inp.scales, n, inp.params[P["ctrl_dt"]])
    done = walk.terminations(inp.gravity[:, 2], inp.base_z, inp.params)
    actor, critic = walk.observations(inp)
    final = {"final_actor_obs": actor[: inp.num_done].copy(), "final_critic_obs": critic[: inp.num_done].copy()}
    return EnvOutputs(reward=reward, terminated=done, actor_obs=actor, critic_obs=critic, term_logs=logs,
                      extras=final)
