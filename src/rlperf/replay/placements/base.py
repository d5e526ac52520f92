"""The placement contract: allocate, add rows, sample a batch to the learner's device, report bytes.

A placement is one short module behind this interface (the TorchRL storage/sampler idea); the
benchmark front ends only ever talk to `Placement`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

from rlperf.measure.timing import time_cuda, time_wall
from rlperf.replay.layout import RowLayout
from rlperf.replay.metrics import END_TO_END, GPU_SAMPLE
from rlperf.replay.placements.specs import PlacementSpec
from rlperf.replay.tables import row_ids


# GPU sample is ~0.1 ms: each sample spans 10 back-to-back draws so host launch gaps stay out of it.
GPU_INNER = 10


class Placement(ABC):
    """Where the replay lives and how a learner batch of `sample_rows` rows reaches `device`.

    What a placement is and needs (name, metrics, alignment, memory) lives in its PlacementSpec;
    one implementation class can serve several specs (gpu and gpu-padded differ only in alignment).
    """

    def __init__(self, *, spec: PlacementSpec, layout: RowLayout, capacity: int, sample_rows: int,
                 device: torch.device | None, threads: int, seed: int):
        self.spec = spec
        self.name = spec.name
        self.metrics = spec.metrics
        self.layout = spec.stored_layout(layout)
        self.capacity = capacity
        self.sample_rows = sample_rows
        self.device = device  # learner device; None on a CPU-only machine
        self.threads = threads
        self.seed = seed

    @abstractmethod
    def setup(self) -> None:
        """Allocate and prefill (every page written); expensive, once per process and case."""

    @abstractmethod
    def sample(self) -> torch.Tensor:
        """One learner batch `(sample_rows, width)`; on the learner device when there is one."""

    def last_indices(self) -> torch.Tensor:
        """Indices drawn by the last `sample()` (for verification)."""
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
            return time_cuda(self.gpu_sample, warmup=warmup, repeat=repeat, stream=self.stream, inner=GPU_INNER)
        raise KeyError(metric)

    @abstractmethod
    def bytes_per_sample(self) -> dict[str, int]:
        """Bytes one learner batch moves: h2d, host_read, device_read (0 where not applicable)."""

    def verify(self) -> None:
        """Check one real batch: every sampled row is the written row its index names."""
        rows = self.sample()
        if self.device is not None and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        got = row_ids(rows).cpu()
        want = self.last_indices().cpu()
        if rows.shape != (self.sample_rows, self.layout.width) or not torch.equal(got, want):
            raise AssertionError(f"{self.name}: gathered rows do not match their indices")
