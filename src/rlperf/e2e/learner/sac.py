"""One SAC learner iteration on the learner device: `updates_per_step` updates of two C51 critics,
the actor and alpha on consecutive minibatches of one sampled chunk (docs/workloads.md A4).

Per update k: critic step (clipped double-Q distributional target, entropy-shifted support,
projected onto the fixed atoms), Polyak update of the target critics with tau, and, when
k % policy_frequency == 0, an actor step and an alpha step toward the target entropy. Forward
passes run under bf16 autocast when `use_amp`; losses and the C51 projection stay in float32. With
`use_symmetry` each minibatch is first concatenated with its left/right mirror (learner/symmetry.py),
so the networks see twice the sampled rows.
"""

from __future__ import annotations

import contextlib
import copy
import math

import torch

from rlperf.e2e.learner.config import LearnerConfig
from rlperf.e2e.learner.networks import Actor, TwinCritic
from rlperf.e2e.learner.symmetry import BatchMirror, walk_mirror
from rlperf.replay.storage import Batch


def project_distribution(atoms: torch.Tensor, probs: torch.Tensor, v_min: float, v_max: float) -> torch.Tensor:
    """C51 projection: mass `probs` (B, N) sitting at shifted atoms `atoms` (B, N), split between the
    two nearest fixed atoms of the support linspace(v_min, v_max, N); returns (B, N), rows sum to 1."""
    n = probs.shape[-1]
    dz = (v_max - v_min) / (n - 1)
    b = (atoms.clamp(v_min, v_max) - v_min) / dz
    lo, hi = b.floor().long(), b.ceil().long()
    # An atom landing exactly on a support point has lo == hi: move one end so its weight is not lost.
    lo = torch.where((hi > 0) & (lo == hi), lo - 1, lo)
    hi = torch.where((lo < n - 1) & (lo == hi), hi + 1, hi)
    out = torch.zeros_like(probs)
    out.scatter_add_(-1, lo, probs * (hi.to(b.dtype) - b))
    out.scatter_add_(-1, hi, probs * (b - lo.to(b.dtype)))
    return out


class SacLearner:
    """Networks, targets, optimisers and alpha of one learner rank; `iteration(batch)` queues one
    iteration's updates and returns its losses as device tensors (read them after a sync)."""

    def __init__(self, cfg: LearnerConfig, device: torch.device | str = "cpu", seed: int = 0,
                 mirror: BatchMirror | None = None):
        self.cfg = cfg
        self.device = torch.device(device)
        self.mirror = None  # use_symmetry: the G1 mirror maps on this device (joint order from the model)
        if cfg.use_symmetry:
            self.mirror = mirror or walk_mirror(cfg.obs_dim, cfg.critic_dim, cfg.action_dim, self.device)
        torch.manual_seed(seed)
        self.actor = Actor(cfg.obs_dim, cfg.action_dim, cfg.actor_widths, cfg.use_layer_norm).to(self.device)
        self.critic = TwinCritic(cfg.critic_dim, cfg.action_dim, cfg.critic_widths, cfg.num_atoms,
                                 cfg.v_min, cfg.v_max, cfg.use_layer_norm).to(self.device)
        self.target_critic = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = torch.tensor(math.log(cfg.alpha_init), device=self.device, requires_grad=True)
        fused = {"fused": True} if self.device.type == "cuda" else {}
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr, **fused)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr, **fused)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=cfg.alpha_lr, **fused)
        self.critic_loss_fn, self.actor_loss_fn = self._critic_loss, self._actor_loss
        if cfg.use_compile:
            mode = "reduce-overhead" if cfg.use_cuda_graphs else "default"
            self.critic_loss_fn = torch.compile(self._critic_loss, mode=mode, dynamic=False)
            self.actor_loss_fn = torch.compile(self._actor_loss, mode=mode, dynamic=False)

    # ---- losses ------------------------------------------------------------------------------
    def _autocast(self):
        if not self.cfg.use_amp:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=torch.bfloat16)

    def _critic_loss(self, b: Batch, alpha: torch.Tensor) -> torch.Tensor:
        cfg, support = self.cfg, self.critic.support
        with torch.no_grad(), self._autocast():
            next_action, next_logp, _ = self.actor(b.next_obs)
            target_probs = torch.softmax(self.target_critic(b.next_critic, next_action).float(), dim=-1)
        with torch.no_grad():
            target_q = (target_probs * support).sum(-1)
            probs = torch.where((target_q[0] <= target_q[1]).unsqueeze(-1), target_probs[0], target_probs[1])
            bootstrap = 1.0 - b.dones * (1.0 - b.truncated)  # time-limit truncation still bootstraps
            atoms = b.rewards.unsqueeze(-1) + (bootstrap * cfg.gamma).unsqueeze(-1) * (
                support.unsqueeze(0) - alpha * next_logp.float().unsqueeze(-1))
            target = project_distribution(atoms, probs, cfg.v_min, cfg.v_max)
        with self._autocast():
            logits = self.critic(b.critic, b.actions)
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        return -(target.unsqueeze(0) * log_probs).sum(-1).mean(-1).sum()  # both critics, mean over rows

    def _actor_loss(self, b: Batch, alpha: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with self._autocast():
            action, logp, _ = self.actor(b.obs)
            logits = self.critic(b.critic, action)
        q = self.critic.values(logits).min(0).values
        logp = logp.float()
        return (alpha * logp - q).mean(), logp.detach()

    # ---- steps -------------------------------------------------------------------------------
    def _step(self, loss: torch.Tensor, opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> None:
        opt.zero_grad(set_to_none=True)
        loss.backward(inputs=params)  # the actor loss must not fill the critics' gradients
        if self.cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm)
        opt.step()

    def train_batch(self, b: Batch) -> Batch:
        """What the networks see for sampled minibatch `b`: `b` plus its mirror with use_symmetry, else `b`."""
        return self.mirror.augment(b) if self.mirror is not None else b

    def update(self, b: Batch, update_index: int) -> dict[str, torch.Tensor]:
        """One update on one minibatch; the actor and alpha step only when update_index % policy_frequency == 0."""
        b = self.train_batch(b)
        alpha = self.log_alpha.detach().exp()
        critic_params = list(self.critic.parameters())
        critic_loss = self.critic_loss_fn(b, alpha)
        self._step(critic_loss, self.critic_opt, critic_params)
        with torch.no_grad():
            torch._foreach_lerp_(list(self.target_critic.parameters()), critic_params, self.cfg.tau)
        out = {"critic_loss": critic_loss.detach()}
        if update_index % self.cfg.policy_frequency == 0:
            actor_loss, logp = self.actor_loss_fn(b, alpha)
            self._step(actor_loss, self.actor_opt, list(self.actor.parameters()))
            alpha_loss = -(self.log_alpha.exp() * (logp + self.cfg.target_entropy)).mean()
            self._step(alpha_loss, self.alpha_opt, [self.log_alpha])
            out.update(actor_loss=actor_loss.detach(), alpha_loss=alpha_loss.detach(), alpha=alpha)
        return out

    def iteration(self, batch: Batch) -> list[dict[str, torch.Tensor]]:
        """`updates_per_step` updates on consecutive `learner_batch`-row slices of one sampled chunk."""
        n, rows = self.cfg.updates_per_step, self.cfg.learner_batch
        if batch.obs.shape[0] < n * rows:
            raise ValueError(f"batch of {batch.obs.shape[0]} rows is smaller than updates_per_step x "
                             f"learner_batch = {n} x {rows}")
        return [self.update(Batch(*(f[k * rows:(k + 1) * rows] for f in batch)), k) for k in range(n)]

    def cpu_actor(self) -> Actor:
        """A CPU copy of the actor for the collector (its weights are synced every iteration)."""
        return copy.deepcopy(self.actor).to("cpu").requires_grad_(False)

    def parameter_count(self) -> dict[str, int]:
        return {"actor": sum(p.numel() for p in self.actor.parameters()),
                "critics": sum(p.numel() for p in self.critic.parameters())}
