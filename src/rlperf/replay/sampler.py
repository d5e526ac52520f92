"""Samplers: uniform row indices with replacement over a storage's sampleable rows, seeded.

Two ways to draw the same distribution:
- `TorchSampler`: a torch generator on the indices' device (`torch.randint`), the reference's way.
- `CounterSampler`: counter-based, splitmix64(seed ^ splitmix64(tick * n + r)) % count. It has no
  generator state, so a GPU kernel can draw and gather in one pass (`cupy_kernels.sample_*`); the
  numpy version here is the same arithmetic, the oracle the kernel is tested against.

Every torch.randint of the replay code lives in `TorchSampler.draw`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import torch

DEVICE_SEED_OFFSET = 100_000  # the reference's per-rank device generator seed is (seed + 100,000) + rank*1009
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


class Sampler(ABC):
    """Draws `out.numel()` indices; `sample(storage, out)` maps them onto the storage's rows."""

    name: str = ""
    in_kernel: bool = False  # True: a device storage may fuse the draw into its gather kernel

    @abstractmethod
    def draw(self, count: int, out: torch.Tensor) -> torch.Tensor:
        """Fill `out` (int64) with uniform integers in [0, count), with replacement."""

    def sample(self, storage, out: torch.Tensor) -> torch.Tensor:
        """Uniform row indices over `storage.sampleable()` (first row, count), wrapping at capacity."""
        first, count = storage.sampleable()
        self.draw(count, out)
        if first:
            out.add_(first).remainder_(storage.capacity_rows)
        return out


class TorchSampler(Sampler):
    name = "torch"

    def __init__(self, seed: int, device: str | torch.device = "cpu"):
        self.device = torch.device(device)
        self.gen = torch.Generator(device=self.device).manual_seed(seed)

    def draw(self, count: int, out: torch.Tensor) -> torch.Tensor:
        if count <= 0:
            raise RuntimeError("cannot sample: no sampleable rows")
        return torch.randint(count, out.shape, generator=self.gen, device=out.device, out=out)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on uint64 arrays (wrapping arithmetic, as in the CUDA kernel)."""
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
        return x ^ (x >> np.uint64(31))


class CounterSampler(Sampler):
    """Counter-based draws: index r of call `tick` depends only on (seed, tick, r); ticks advance per call."""

    name = "fused"
    in_kernel = True

    def __init__(self, seed: int, device: str | torch.device = "cpu"):
        self.seed = seed
        self.device = torch.device(device)
        self.tick = 0

    def draws(self, count: int, n: int, tick: int) -> np.ndarray:
        """The integers call `tick` yields, computed on the host (the kernel's oracle)."""
        counter = np.uint64(tick) * np.uint64(n) + np.arange(n, dtype=np.uint64)
        return (splitmix64(np.uint64(self.seed) ^ splitmix64(counter)) % np.uint64(count)).astype(np.int64)

    def draw(self, count: int, out: torch.Tensor) -> torch.Tensor:
        if count <= 0:
            raise RuntimeError("cannot sample: no sampleable rows")
        out.copy_(torch.from_numpy(self.draws(count, out.numel(), self.next_tick())).reshape(out.shape))
        return out

    def next_tick(self) -> int:
        """The tick of the next draw (a fused kernel calls this once per launch)."""
        tick, self.tick = self.tick, self.tick + 1
        return tick


SAMPLERS = {"torch": TorchSampler, "fused": CounterSampler}


def make_sampler(name: str, *, seed: int, device: str | torch.device = "cpu") -> Sampler:
    """A sampler by registry name; device samplers are seeded `seed + DEVICE_SEED_OFFSET` like the reference."""
    device = torch.device(device)
    offset = DEVICE_SEED_OFFSET if device.type == "cuda" else 0
    return SAMPLERS[name](seed + offset, device)


__all__ = ["CounterSampler", "DEVICE_SEED_OFFSET", "SAMPLERS", "Sampler", "TorchSampler", "make_sampler",
           "splitmix64"]
