"""The CPU actor the collector runs when the learner has not handed one over.

It is the learner's own `Actor` (spec B4 shape), so a handed-over actor and the default one share one
interface (`act(obs, deterministic)`) and one state_dict layout: `set_policy_weights` takes either.
"""

from __future__ import annotations

import torch
from torch import nn

from rlperf.e2e.learner.networks import Actor

HIDDEN = (512, 256, 128)


def default_actor(obs_dim: int, action_dim: int, *, seed: int = 0, hidden: tuple[int, ...] = HIDDEN) -> Actor:
    """A learner `Actor` initialised from a private generator (two collectors with one seed act identically,
    the global torch RNG is left alone); a small mu scale keeps a random robot near its default pose."""
    actor = Actor(obs_dim, action_dim, tuple(hidden))
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in actor.modules():
            if isinstance(module, nn.Linear):
                bound = 1.0 / module.in_features ** 0.5
                module.weight.uniform_(-bound, bound, generator=generator)
                module.bias.uniform_(-bound, bound, generator=generator)
        actor.mu.weight.mul_(0.1)
        actor.mu.bias.zero_()
    return actor.requires_grad_(False)
