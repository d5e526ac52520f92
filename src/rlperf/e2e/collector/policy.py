"""The CPU actor the collector runs when the learner has not handed one over (spec B4 actor shape)."""

from __future__ import annotations

import torch
from torch import nn

HIDDEN = (512, 256, 128)


class DeterministicActor(nn.Module):
    """obs -> 512 -> 256 -> 128 (Linear + LayerNorm + SiLU) -> tanh(mu): actions in [-1, 1].

    Seeded initialisation with a private generator, so two collectors with one seed act identically and the
    global torch RNG is left alone. Small init scale on mu keeps a random robot near its default pose.
    """

    def __init__(self, obs_dim: int, action_dim: int, *, seed: int = 0, hidden: tuple[int, ...] = HIDDEN):
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_dim
        for size in hidden:
            layers += [nn.Linear(width, size), nn.LayerNorm(size), nn.SiLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.mu = nn.Linear(width, action_dim)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, nn.Linear):
                    bound = 1.0 / module.in_features ** 0.5
                    module.weight.uniform_(-bound, bound, generator=generator)
                    module.bias.uniform_(-bound, bound, generator=generator)
            self.mu.weight.mul_(0.1)
            self.mu.bias.zero_()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.mu(self.trunk(obs)))
