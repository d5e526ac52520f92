"""SAC-statistics consistency (issue 11, section 3): does the learner see the same data from a compact layout?

Two identically initialised SAC learners run N updates on batches of the *same indices*, one from the
packed fp32 layout, one from the bf16 compact layout (`replay.pairing.PairedStorages`, written by the
same steps), with the same actor noise per update. Their critic loss, mean Q and actor loss
trajectories are compared.

Relative difference of a trajectory: max_k |a_k - b_k| / mean_k |a_k| (normalised by the trajectory's
scale, since the actor loss may cross zero). Accepted bound, ACCEPT_REL = 2 % on each of the three:
bf16 rounds obs and critic obs to 2^-9 relative, which moves one update's statistics by about that much,
and over a short run (tens of updates) the two learners drift apart only as fast as training amplifies
it, so an honest compact layout stays well under 1 %. A batch with a wrong field (a misaligned
next_obs, a lost terminal patch, scaled rewards) moves mean Q and the actor loss by several percent or
more within a few updates; the C51 critic loss (a cross-entropy over atoms) moves least, so the check
fails when any one of the three leaves the bound.

    rlperf e2e-consistency --task g1_motion_tracking --updates 50 [hydra overrides ...]
"""

from __future__ import annotations

import torch

QUANTITIES = ("critic_loss", "mean_q", "actor_loss")
ACCEPT_REL = 0.02
LAYOUTS = ("fp32", "compact")


def fill(pair, steps: int, num_envs: int, dims, *, seed: int = 0, terminal_rate: float = 0.02) -> None:
    """`steps` synthetic vector steps into both storages: smooth rewards, a few terminal rows per step
    (with their final observations), consecutive steps chained through next_obs."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(num_envs, dims.obs_dim, generator=g)
    critic = torch.randn(num_envs, dims.critic_dim, generator=g)
    for _ in range(steps):
        nxt = obs + 0.1 * torch.randn(obs.shape, generator=g)
        nxt_c = critic + 0.1 * torch.randn(critic.shape, generator=g)
        done = torch.rand(num_envs, generator=g) < terminal_rate
        trunc = done & (torch.rand(num_envs, generator=g) < 0.5)
        pair.add(obs=obs, next_obs=nxt, actions=torch.rand(num_envs, dims.action_dim, generator=g) * 2 - 1,
                 reward=nxt[:, 0].tanh(), done=(done & ~trunc).float(), truncated=trunc.float(), critic=critic,
                 next_critic=nxt_c, terminal_mask=done, final_obs=nxt, final_critic=nxt_c)
        reset_obs, reset_c = torch.randn(obs.shape, generator=g), torch.randn(critic.shape, generator=g)
        obs = torch.where(done[:, None], reset_obs, nxt)
        critic = torch.where(done[:, None], reset_c, nxt_c)


def _mean_q(learner, b) -> float:
    with torch.no_grad():
        return float(learner.critic.values(learner.critic(b.critic, b.actions)).mean())


def sac_trajectories(cfg, pair, updates: int, *, seed: int = 0, device="cpu", corrupt=None) -> dict:
    """Per layout of `pair`, the trajectories of QUANTITIES over `updates` updates on identical indices.
    `corrupt(batch) -> batch`, if given, is applied to the second layout's batches (the test's negative)."""
    from rlperf.e2e.learner.sac import SacLearner

    learners = [SacLearner(cfg, device, seed=seed) for _ in pair.storages]
    first, count = pair.sampleable()
    capacity_rows = pair.storages[0].capacity_rows
    g = torch.Generator().manual_seed(seed)
    out = [{q: [] for q in QUANTITIES} for _ in learners]
    for k in range(updates):
        idx = (first + torch.randint(count, (cfg.learner_batch,), generator=g)) % capacity_rows
        batches = list(pair.batches(idx))
        if corrupt is not None:
            batches[1] = corrupt(batches[1])
        for learner, batch, traj in zip(learners, batches, out):
            batch = type(batch)(*(f.to(device) for f in batch))
            traj["mean_q"].append(_mean_q(learner, batch))
            torch.manual_seed(seed * 1_000_003 + k)  # the same actor noise for both learners
            stats = learner.update(batch, k)
            traj["critic_loss"].append(float(stats["critic_loss"]))
            if "actor_loss" in stats:
                traj["actor_loss"].append(float(stats["actor_loss"]))
    return dict(zip((s.layout.name for s in pair.storages), out))


def relative_difference(a: list[float], b: list[float]) -> float:
    """max_k |a_k - b_k| / mean_k |a_k| (0 for two empty trajectories)."""
    if not a:
        return 0.0
    ta, tb = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    return float((ta - tb).abs().max() / ta.abs().mean().clamp_min(1e-12))


def check(cfg, workload, *, updates: int, seed: int = 0, device="cpu", bound: float = ACCEPT_REL,
          corrupt=None, fill_steps: int | None = None) -> dict:
    """Fill fp32 and compact storages with the same steps, run both learners, report and judge."""
    from rlperf.replay.pairing import PairedStorages

    n = workload.num_envs
    capacity_rows = workload.capacity_rows
    pair = PairedStorages(workload.layout, capacity_rows, n, layouts=LAYOUTS, terminal_rows=capacity_rows)  # never full
    fill(pair, fill_steps or capacity_rows // n, n, workload.layout, seed=seed)
    traj = sac_trajectories(cfg, pair, updates, seed=seed, device=device, corrupt=corrupt)
    ref, other = (traj[name] for name in LAYOUTS)
    rel = {q: relative_difference(ref[q], other[q]) for q in QUANTITIES}
    return {"layouts": list(LAYOUTS), "updates": updates, "learner_batch": cfg.learner_batch,
            "trajectories": traj, "relative_difference": rel, "bound": bound,
            "ok": all(v <= bound for v in rel.values()), "definition": relative_difference.__doc__}

