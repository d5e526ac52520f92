"""Synthetic collector steps for the replay tests: every value names its (step, env, column).

`obs` of step t+1 is what step t reports as next_obs (the collector's contract, which next-obs
elision relies on); terminal rows carry distinct final observations.
"""

from __future__ import annotations

import torch

from rlperf.row_layout import RowLayout

TINY = RowLayout(5, 3, 6)
ENVS = 4


def _vec(step: int, width: int, envs: int, tag: float) -> torch.Tensor:
    env = torch.arange(envs, dtype=torch.float32)[:, None]
    col = torch.arange(width, dtype=torch.float32)[None, :]
    return tag + step * 8.0 + env + col / 8.0


def step(t: int, dims: RowLayout = TINY, envs: int = ENVS, terminal_every: int = 3) -> dict:
    """Step t's `Storage.add` keywords; env (t % envs) ends its episode every `terminal_every` steps."""
    mask = torch.zeros(envs, dtype=torch.bool)
    if t % terminal_every == 0:
        mask[t % envs] = True
    return dict(obs=_vec(t, dims.obs_dim, envs, 0.0), next_obs=_vec(t + 1, dims.obs_dim, envs, 0.0),
                actions=_vec(t, dims.action_dim, envs, -50.0), reward=_vec(t, 1, envs, 0.25)[:, 0],
                done=mask.float(), truncated=(mask & (torch.arange(envs) % 2 == 0)).float(),
                critic=_vec(t, dims.critic_dim, envs, 100.0), next_critic=_vec(t + 1, dims.critic_dim, envs, 100.0),
                terminal_mask=mask, final_obs=_vec(t, dims.obs_dim, envs, -200.0),
                final_critic=_vec(t, dims.critic_dim, envs, -300.0))


def expected_rows(steps: int, capacity: int, dims: RowLayout = TINY, envs: int = ENVS,
                  terminal_every: int = 3) -> dict[int, dict]:
    """Storage row -> the fp32 fields a learner should see for it after `steps` adds (later steps win)."""
    rows = {}
    for t in range(steps):
        s = step(t, dims, envs, terminal_every)
        nxt = torch.where(s["terminal_mask"][:, None], s["final_obs"], s["next_obs"])
        nxt_c = torch.where(s["terminal_mask"][:, None], s["final_critic"], s["next_critic"])
        for e in range(envs):
            rows[(t * envs + e) % capacity] = {
                "obs": s["obs"][e], "next_obs": nxt[e], "actions": s["actions"][e], "rewards": s["reward"][e],
                "dones": s["done"][e], "truncated": s["truncated"][e], "critic": s["critic"][e],
                "next_critic": nxt_c[e]}
    return rows


def assert_batch_matches(batch, indices, expected: dict, layout) -> None:
    """Every sampled row equals the row written at its index, after the layout's dtype rounding."""
    from rlperf.replay.storage import TORCH_DTYPES

    dtype_of = {"rewards": "float32", "dones": layout.flags, "truncated": layout.flags, "actions": layout.actions}
    for i, row in enumerate(indices.tolist()):
        for name, want in expected[row].items():
            dtype = TORCH_DTYPES[dtype_of.get(name, layout.vectors)]
            got = getattr(batch, name)[i].float()
            assert torch.equal(got, want.to(dtype).float()), (name, row, got, want)
