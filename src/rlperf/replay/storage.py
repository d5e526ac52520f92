"""The replay write/sample contract (workloads.md A2, A6) on one torch device.

`add` writes one vector env step, wrapping at capacity, and patches next_obs / next_critic with the
final observations of terminal rows before they become visible. `sample` draws uniformly with
replacement over the filled rows and returns named views into one gathered chunk.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from rlperf.replay.layout import FIELD_ORDER, RowLayout


class Batch(NamedTuple):
    obs: torch.Tensor
    next_obs: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    truncated: torch.Tensor
    critic: torch.Tensor
    next_critic: torch.Tensor


def field_views(rows: torch.Tensor, layout: RowLayout) -> Batch:
    """Named views into packed rows; scalar fields come back 1-D, padding columns are never exposed."""
    views = []
    for name, (start, stop) in layout.offsets().items():
        view = rows[:, start:stop]
        views.append(view[:, 0] if stop - start == 1 and name in ("reward", "done", "truncated") else view)
    return Batch(*views)


class ReplayStorage:
    """A `(capacity, stored_width)` float32 ring with a monotonic write pointer."""

    def __init__(self, layout: RowLayout, capacity: int, *, device: str | torch.device = "cpu",
                 pin_memory: bool = False):
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.layout = layout
        self.capacity = capacity
        self.table = torch.zeros((capacity, layout.stored_width), dtype=torch.float32, device=device,
                                 pin_memory=pin_memory)
        self.ptr = 0  # monotonic, never wrapped
        self.size = 0

    @property
    def device(self) -> torch.device:
        return self.table.device

    def add(self, *, obs, next_obs, actions, reward, done, truncated, critic=None, next_critic=None,
            terminal_mask=None, final_obs=None, final_critic=None) -> None:
        """Write one vector step of n = len(obs) rows; terminal rows get their final observations."""
        n = obs.shape[0]
        if self.layout.critic_dim and (critic is None or next_critic is None):
            raise ValueError("critic and next_critic are required when critic_dim > 0")
        rows = torch.empty((n, self.layout.stored_width), dtype=torch.float32, device=self.device)
        if self.layout.stored_width > self.layout.width:
            rows[:, self.layout.width:] = 0
        parts = {"obs": obs, "next_obs": next_obs, "actions": actions, "reward": reward, "done": done,
                 "truncated": truncated, "critic": critic, "next_critic": next_critic}
        for name, (start, stop) in self.layout.offsets().items():
            if stop > start:
                rows[:, start:stop] = parts[name].reshape(n, stop - start).to(self.device, torch.float32)
        if terminal_mask is not None:
            self._patch_terminal(rows, terminal_mask, final_obs, final_critic)
        self.add_rows(rows)

    def _patch_terminal(self, rows, terminal_mask, final_obs, final_critic) -> None:
        mask = torch.as_tensor(terminal_mask, device=self.device).bool()
        if not mask.any():
            return
        offsets = self.layout.offsets()
        if final_obs is None:
            raise ValueError("terminal_mask is set but final_obs is missing")
        start, stop = offsets["next_obs"]
        rows[mask, start:stop] = final_obs.to(self.device, torch.float32)[mask]
        if self.layout.critic_dim:
            if final_critic is None:
                raise ValueError("terminal_mask is set but final_critic is missing")
            start, stop = offsets["next_critic"]
            rows[mask, start:stop] = final_critic.to(self.device, torch.float32)[mask]

    def add_rows(self, rows: torch.Tensor) -> None:
        """Write already-packed rows `(n, stored_width)`; the write splits in two across the end."""
        n = rows.shape[0]
        if n > self.capacity:
            raise ValueError(f"one add of {n} rows exceeds capacity {self.capacity}")
        start = self.ptr % self.capacity
        first = min(n, self.capacity - start)
        self.table[start:start + first].copy_(rows[:first], non_blocking=True)
        if first < n:
            self.table[: n - first].copy_(rows[first:], non_blocking=True)
        self.ptr += n
        self.size = min(self.size + n, self.capacity)

    def sample_indices(self, n: int, generator: torch.Generator) -> torch.Tensor:
        if self.size == 0:
            raise RuntimeError("cannot sample from an empty replay")
        return torch.randint(0, self.size, (n,), generator=generator, device=self.device)

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        """Uniform with replacement over [0, size): named views into one gathered chunk."""
        idx = self.sample_indices(n, generator)
        return field_views(torch.index_select(self.table, 0, idx), self.layout)


__all__ = ["Batch", "ReplayStorage", "field_views", "FIELD_ORDER"]
