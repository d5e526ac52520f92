"""Host-authoritative replay: CPU random gather into staging, then H2D on a copy stream.

`h2d` stages into pinned memory (DMA straight from the staging buffer); `h2d-pageable` stages into
pageable memory (the driver bounces it through its own pinned buffers, synchronously); `pipelined`
gathers chunk k+1 while chunk k is already on its way to the GPU. `h2d-numba` is `h2d` with the CPU
gather done by the Numba row-gather kernel (`replay.host_gather`, variant "plain") instead of
`torch.index_select`: on the H200 host it beat index_select by 10 % in the gather probe (issue 23 section 3), so
it is a placement of its own that `rlperf replay` times beside `host` and `reference-host`; there, in its own
table and timed block, it has not been faster so far (docs/replay-host-vs-reference.md).
"""

from __future__ import annotations

import torch

from rlperf.measure.timing import time_cuda, time_wall
from rlperf.replay.metrics import CPU_SAMPLE, H2D
from rlperf.replay import host_gather
from rlperf.replay.placements.base import Placement


class HostReplay(Placement):
    pinned = True

    def setup(self) -> None:
        torch.set_num_threads(self.threads)
        cuda = self.device is not None and self.device.type == "cuda"
        self.make_storage()
        self.make_sampler()
        self.staging = torch.empty((self.sample_rows, self.layout.batch_width), dtype=torch.float32,
                                   pin_memory=self.pinned and cuda)
        self.staging.fill_(0)  # fault the staging pages in now, not inside the first timed call
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64)
        if cuda:
            self.target = torch.empty_like(self.staging, device=self.device)
            self.stream = torch.cuda.Stream(self.device)

    @property
    def _non_blocking(self) -> bool:
        return self.pinned

    def gather(self, idx: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return self.storage.gather(idx, out)

    def cpu_sample(self) -> torch.Tensor:
        self.sampler.sample(self.storage, self.idx)
        return self.gather(self.idx, self.staging)

    def h2d(self) -> None:
        with torch.cuda.stream(self.stream):
            self.target.copy_(self.staging, non_blocking=self._non_blocking)

    def sample(self) -> torch.Tensor:
        self.cpu_sample()
        if self.device is None or self.device.type != "cuda":
            return self.staging[:, : self.layout.width]
        self.h2d()
        self.stream.synchronize()
        return self.target[:, : self.layout.width]

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        if metric == CPU_SAMPLE and metric in self.metrics:
            return time_wall(self.cpu_sample, warmup=warmup, repeat=repeat)
        if metric == H2D and metric in self.metrics:
            self.cpu_sample()
            return time_cuda(self.h2d, warmup=warmup, repeat=repeat, stream=self.stream)
        return super().measure(metric, warmup=warmup, repeat=repeat)

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.batch_row_bytes
        return {"h2d": batch, "host_read": batch, "device_read": 0}


class HostPageableReplay(HostReplay):
    pinned = False


class HostPipelinedReplay(HostReplay):
    """Gather chunk k+1 on the CPU while chunk k's DMA runs: exposed time ~ max(gather, H2D) + one chunk."""

    chunks = 8

    def sample(self) -> torch.Tensor:
        if self.device is None or self.device.type != "cuda":
            return super().sample()
        self.sampler.sample(self.storage, self.idx)
        bounds = torch.linspace(0, self.sample_rows, self.chunks + 1).long().tolist()
        with torch.cuda.stream(self.stream):
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                self.gather(self.idx[lo:hi], self.staging[lo:hi])
                self.target[lo:hi].copy_(self.staging[lo:hi], non_blocking=True)
        self.stream.synchronize()
        return self.target[:, : self.layout.width]


class HostNumbaReplay(HostReplay):
    """`host` with the Numba "plain" row gather on min(threads, NUMBA_NUM_THREADS) Numba threads.

    The kernel copies whole rows of equal byte width, so the stored row must be the batch row (no
    next-obs elision; the registry refuses elided layouts for this transfer). Numba's thread count is a
    thread-local mask that others on the sampling thread set too (the e2e collector's env kernels set
    theirs before each run), so each gather applies this placement's count again (about a microsecond)."""

    def setup(self) -> None:
        import numba

        if self.layout.stored_width != self.layout.batch_width:
            raise ValueError(f"{self.name}: the Numba row gather copies whole rows, but layout "
                             f"{self.layout.name!r} stores {self.layout.stored_width} words a row and batches "
                             f"{self.layout.batch_width}")
        if self.layout.stored_row_bytes % 8:
            raise ValueError(f"{self.name}: host_gather takes rows of a multiple of 8 B, layout "
                             f"{self.layout.name!r} has {self.layout.stored_row_bytes} B rows")
        super().setup()
        self.numba_threads = min(self.threads, numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(self.numba_threads)
        host_gather.check_variant("plain")  # compile now, not inside the first timed call

    def gather(self, idx: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return host_gather.gather("plain", self.table, idx, out, threads=self.numba_threads)
