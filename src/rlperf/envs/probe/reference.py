"""Fast numpy float32 probe update_state (variant 1 of docs/workloads.md D): the parity oracle and baseline.

The fast walk terms (einsum row sums, cached heights and contacts, `out=` observations) plus the two
probe-only terms, then the 2% final-obs copy. The literal version stays in `reference_literal.py`.
"""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import EnvOutputs
from rlperf.envs.probe.inputs import TERMS, ProbeInputs
from rlperf.envs.walk import reference as walk
from rlperf.envs.walk.inputs import P

F32 = np.float32


class ProbeTerms(walk.Terms):
    """Walk terms plus tracking_pose and penalty_action_smooth; penalty names alias the walk ones."""

    aliases = {**walk.Terms.aliases, "penalty_action_rate": "action_rate"}

    def tracking_pose(self):
        err = self._pose(self.inp.pose_weights)
        err /= -(F32(10) * self.p["tracking_sigma"])
        return np.exp(err, out=err)

    def penalty_action_smooth(self):
        return walk.row_sumsq(self.inp.actions)


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
