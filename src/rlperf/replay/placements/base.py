"""The transfer contract: a placement owns a Storage and a Sampler, and moves batches to the learner.

A placement is one storage x sampler x transfer combination (see `specs`); the class is the transfer
(host staging + H2D, UVA, device-resident, cache). The benchmark front ends only ever talk to
`Placement`: setup, sample, measure, bytes_per_sample, verify.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

import numpy as np
import torch

from rlperf.measure.timing import time_cuda, time_wall
from rlperf.replay.metrics import END_TO_END, GPU_SAMPLE
from rlperf.replay.sampler import make_sampler
from rlperf.replay.storage import Storage
from rlperf.replay.tables import row_ids
from rlperf.row_layout import RowLayout

# GPU sample is ~0.05 ms: each sample spans 10 back-to-back draws, queued behind a GPU-side hold so
# host launch cost stays out of it (docs/replay-bimodality.md).
GPU_INNER = 10


class Placement(ABC):
    """Where the replay lives and how a learner batch of `sample_rows` rows reaches `device`.

    `prefill=True` writes every row of the storage with the checkable pattern in `setup` (benchmarks);
    with `prefill=False` the storage starts empty and the caller writes through `storage.add`.
    """

    def __init__(self, *, spec, layout: RowLayout, capacity_rows: int, sample_rows: int,
                 device: torch.device | None, threads: int, seed: int, step_rows: int = 1, prefill: bool = True):
        self.spec = spec
        self.name = spec.name
        self.metrics = spec.metrics
        self.layout = spec.stored_layout(layout)
        self.capacity_rows = capacity_rows
        self.sample_rows = sample_rows
        self.device = device  # learner device; None on a CPU-only machine
        self.threads = threads
        self.seed = seed
        self.step_rows = step_rows
        self.prefill = prefill

    def make_storage(self, device: torch.device | None = None) -> Storage:
        """This placement's storage (kind from the spec), pattern-filled through its write path if `prefill`."""
        self.storage = Storage(self.layout, self.capacity_rows, kind=self.spec.kind, device=device,
                               step_rows=self.step_rows)
        if self.prefill:
            self.storage.prefill_pattern()
        self.table = self.storage.table
        return self.storage

    @functools.cached_property
    def batch(self) -> torch.Tensor:
        """The learner's view of `self.out` (padding words dropped), for the placements that gather into an `out`
        set at setup: derived once, since `sample` returns it every pass and a slice is host time on its clock."""
        return self.out[:, : self.layout.width]

    @property
    def storage_bytes(self) -> int:
        """Bytes the storage holds (a peer with its own storage says how it counts them)."""
        return self.storage.nbytes

    def make_sampler(self, device: torch.device | None = None):
        self.sampler = make_sampler(getattr(self.spec, "sampler", "torch"), seed=self.seed,
                                    device=device or torch.device("cpu"))
        return self.sampler

    def counter_draw_args(self, tick: int) -> tuple:
        """The fused sampler's draw arguments of a kernel launch for draw `tick` (first, count, capacity, seed,
        tick, as `cupy_kernels.draw_row` takes them): uniform over the storage's sampleable rows."""
        first, count = self.storage.sampleable()
        return (np.uint64(first), np.uint64(count), np.uint64(self.capacity_rows), np.uint64(self.sampler.seed),
                np.uint64(tick))

    @abstractmethod
    def setup(self) -> None:
        """Allocate and prefill (every page written); expensive, once per process and case."""

    @abstractmethod
    def sample(self) -> torch.Tensor:
        """One learner batch `(sample_rows, width)` words; on the learner device when there is one."""

    def last_indices(self) -> torch.Tensor:
        """Storage rows drawn by the last `sample()` (for verification)."""
        return self.idx

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        """Samples in ms of one of `self.metrics`: end to end on a wall clock with the learner device
        synchronised, device-only work (`gpu_sample`, on `self.stream`) with CUDA events."""
        if metric not in self.metrics:
            raise KeyError(f"{self.name} does not report {metric}")
        if metric == END_TO_END:
            devices = [self.device] if self.device is not None and self.device.type == "cuda" else []
            return time_wall(self.sample, warmup=warmup, repeat=repeat, devices=devices)
        if metric == GPU_SAMPLE:
            return time_cuda(self.gpu_sample, warmup=warmup, repeat=repeat, stream=self.stream, inner=GPU_INNER,
                             run_ahead=True)
        raise KeyError(metric)

    @abstractmethod
    def bytes_per_sample(self) -> dict[str, int]:
        """Bytes one learner batch moves: h2d, host_read, device_read (0 where not applicable)."""

    def verify(self) -> None:
        """Check one real batch of a pattern-filled table: every sampled row is the row its index names
        (and, with next-obs elision, its next_obs is the successor row's obs)."""
        rows = self.sample()
        if self.device is not None and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        want = self.last_indices().cpu()
        ok = rows.shape == (self.sample_rows, self.layout.width) and torch.equal(row_ids(rows).cpu(), want)
        if ok and getattr(self.layout, "elide_next", False):
            f = next(f for f in self.layout.batch_fields() if f.name == "next_obs")
            succ = rows.contiguous().view(torch.uint8)[:, f.offset: f.offset + 4].contiguous().view(torch.int32)
            ok = torch.equal(succ[:, 0].cpu().long(), (want + self.step_rows) % self.capacity_rows)
        if not ok:
            raise AssertionError(f"{self.name}: gathered rows do not match their indices")
