"""A seeded synthetic learner batch: for learner-only tests and timings without a replay or collector.

The reward is a smooth function of the observation, so a critic has something to learn; about 5 % of
rows are terminal and half of those truncated, so both bootstrap branches run.
"""

from __future__ import annotations

import torch

from rlperf.e2e.learner.config import LearnerConfig
from rlperf.replay.storage import Batch


def synthetic_batch(cfg: LearnerConfig, rows: int, *, device="cpu", seed: int = 0) -> Batch:
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(rows, cfg.obs_dim, generator=g)
    critic = torch.randn(rows, cfg.critic_dim, generator=g)
    actions = torch.rand(rows, cfg.action_dim, generator=g) * 2 - 1
    rewards = obs[:, 0].tanh()
    dones = (torch.rand(rows, generator=g) < 0.05).float()
    truncated = dones * (torch.rand(rows, generator=g) < 0.5).float()
    fields = (obs, obs.roll(1, 0), actions, rewards, dones, truncated, critic, critic.roll(1, 0))
    return Batch(*(f.to(device) for f in fields))
