"""The SAC networks of docs/workloads.md B4: a tanh-squashed Gaussian actor and two C51 critics.

actor:  obs -> 512 -> 256 -> 128 (Linear + LayerNorm + SiLU each) -> mu, log_std heads; tanh squash.
critic: critic obs + action -> 768 -> 384 -> 192 (same blocks) -> num_atoms logits over [v_min, v_max].
"""

from __future__ import annotations

import math

import torch
from torch import nn

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0  # log sigma squashed into this range (keeps exp() finite)


def mlp(in_dim: int, widths: tuple[int, ...], layer_norm: bool) -> nn.Sequential:
    """Linear (+ LayerNorm) + SiLU per hidden width."""
    layers: list[nn.Module] = []
    for width in widths:
        layers += [nn.Linear(in_dim, width), *([nn.LayerNorm(width)] if layer_norm else []), nn.SiLU()]
        in_dim = width
    return nn.Sequential(*layers)


class Actor(nn.Module):
    """Gaussian policy with a tanh squash; `forward` returns (action, log_prob, mean action)."""

    def __init__(self, obs_dim: int, action_dim: int, widths: tuple[int, int, int], layer_norm: bool = True):
        super().__init__()
        self.trunk = mlp(obs_dim, widths, layer_norm)
        self.mu = nn.Linear(widths[-1], action_dim)
        self.log_std = nn.Linear(widths[-1], action_dim)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.trunk(obs)
        mu = self.mu(h).float()  # the heads' math in float32, also under bf16 autocast
        log_std = torch.tanh(self.log_std(h).float())
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1.0)
        std = log_std.exp()
        pre = mu + std * torch.randn_like(mu)
        action = torch.tanh(pre)
        # Gaussian log density of `pre`, minus log|d tanh / d pre| (the change of variables of the squash).
        gauss = -0.5 * ((pre - mu) / std).pow(2) - log_std - 0.5 * math.log(2 * math.pi)
        log_prob = (gauss - 2.0 * (math.log(2.0) - pre - nn.functional.softplus(-2.0 * pre))).sum(-1)
        return action, log_prob, torch.tanh(mu)

    @torch.no_grad()
    def act(self, obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """What the collector's CPU copy runs: a sampled (or mean) squashed action."""
        action, _, mean = self(obs)
        return mean if deterministic else action


class DistributionalCritic(nn.Module):
    """One C51 Q-network: logits over `num_atoms` fixed atoms of the return."""

    def __init__(self, in_dim: int, widths: tuple[int, int, int], num_atoms: int, layer_norm: bool = True):
        super().__init__()
        self.trunk = mlp(in_dim, widths, layer_norm)
        self.head = nn.Linear(widths[-1], num_atoms)

    def forward(self, critic_obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(torch.cat([critic_obs, action], dim=-1)))


class TwinCritic(nn.Module):
    """The two C51 critics and their shared support; `forward` returns logits `(2, B, num_atoms)`."""

    def __init__(self, critic_dim: int, action_dim: int, widths: tuple[int, int, int], num_atoms: int,
                 v_min: float, v_max: float, layer_norm: bool = True):
        super().__init__()
        self.q1 = DistributionalCritic(critic_dim + action_dim, widths, num_atoms, layer_norm)
        self.q2 = DistributionalCritic(critic_dim + action_dim, widths, num_atoms, layer_norm)
        self.v_min, self.v_max, self.num_atoms = v_min, v_max, num_atoms
        self.register_buffer("support", torch.linspace(v_min, v_max, num_atoms), persistent=False)

    def forward(self, critic_obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.q1(critic_obs, action), self.q2(critic_obs, action)])

    def values(self, logits: torch.Tensor) -> torch.Tensor:
        """Expected return per critic: sum_i softmax(logits)_i * z_i, shape `(2, B)`."""
        return (torch.softmax(logits.float(), dim=-1) * self.support).sum(-1)
