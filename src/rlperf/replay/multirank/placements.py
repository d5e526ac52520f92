"""Rank-level placements: the single-GPU placements run as one rank of a process group.

Each class reuses its single-GPU parent (gather, H2D, verification) and changes only where the rows
live: a shared host table, a full replica per GPU, a local shard, or a shard served to every rank by
all-to-all. On CPU ranks (gloo, tests) the "device" tables live in the rank's host memory.
"""

from __future__ import annotations

import torch

from rlperf.measure.timing import synchronize
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.replay.multirank.clock import time_ranks
from rlperf.replay.multirank.exchange import gather_global
from rlperf.replay.multirank.rank_tables import shard_table
from rlperf.replay.placements.gpu import GpuReplay
from rlperf.replay.placements.host import HostReplay
from rlperf.replay.placements.specs import INDEX_BYTES
from rlperf.replay.sampler import TorchSampler, make_sampler
from rlperf.replay.tables import filled_table


class _Rank:
    """Mixin: the rank context, a per-metric step function, and traffic with interconnect bytes."""

    def __init__(self, *, ctx, shared_table=None, **kw):
        super().__init__(**kw)
        self.ctx = ctx
        self.shared_table = shared_table

    @property
    def batch_bytes(self) -> int:
        return self.sample_rows * self.layout.stored_row_bytes

    def step(self, metric: str):
        """The callable one timed iteration of `metric` runs (the clock synchronises the device)."""
        raise KeyError(metric)

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        return time_ranks(self.step(metric), self.ctx, warmup=warmup, repeat=repeat)[0]

    def traffic(self) -> dict[str, float]:
        """Bytes one learner batch moves on this rank, measured from what the rank actually did."""
        return {"interconnect_in": 0, "interconnect_out": 0, **self.bytes_per_sample()}


class SharedHostRank(_Rank, HostReplay):
    """CPU gather from the launcher's shared table with this rank's own threads, then H2D to cuda:{rank}."""

    def setup(self) -> None:
        if self.shared_table is None:
            raise RuntimeError("shared-host needs the launcher's shared table")
        self.table = self.shared_table
        cuda = self.device is not None
        self.staging = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32,
                                   pin_memory=cuda)
        self.staging.fill_(0)  # fault the staging pages in now
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64)
        self.sampler = TorchSampler(self.seed)
        if cuda:
            self.target = torch.empty_like(self.staging, device=self.device)
            self.stream = torch.cuda.Stream(self.device)

    def cpu_sample(self) -> torch.Tensor:
        """Uniform over the whole shared table (the benchmark's steady state of a full ring)."""
        self.sampler.draw(self.capacity_rows, self.idx)
        return torch.index_select(self.table, 0, self.idx, out=self.staging)

    def step(self, metric: str):
        if metric == CPU_SAMPLE:
            return self.cpu_sample
        if metric == H2D:
            self.cpu_sample()
            return self.h2d
        if metric == END_TO_END:
            return self.sample
        raise KeyError(metric)

    def bytes_per_sample(self) -> dict[str, int]:
        return {"h2d": self.batch_bytes if self.device is not None else 0, "host_read": self.batch_bytes,
                "device_read": 0}


class GpuReplicaRank(_Rank, GpuReplay):
    """A full table on this rank's device; device randint + index_select, no traffic between ranks."""

    def _make_table(self) -> torch.Tensor:
        return filled_table(self.capacity_rows, self.layout.stored_width, device=self.ctx.tensor_device)

    def setup(self) -> None:
        dev = self.ctx.tensor_device
        self.table = self._make_table()
        self.out = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32, device=dev)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=dev)
        self.sampler = make_sampler("torch", seed=self.seed, device=self.device or dev)
        self.stream = torch.cuda.Stream(dev) if self.device is not None else None
        synchronize(self.ctx.sync_devices)

    def gpu_sample(self) -> None:
        self.sampler.draw(self.capacity_rows, self.idx)
        torch.index_select(self.table, 0, self.idx, out=self.out)

    def step(self, metric: str):
        if metric == GPU_SAMPLE:
            return self.sample
        raise KeyError(metric)


class RankLocalRank(GpuReplicaRank):
    """Only this rank's rows (capacity / N, global ids [rank * C/N, (rank + 1) * C/N)), sampled locally."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.shard_rows = self.capacity_rows // self.ctx.world
        self.first_row = self.ctx.rank * self.shard_rows

    def _make_table(self) -> torch.Tensor:
        return shard_table(self.shard_rows, self.layout.stored_width, self.first_row, self.ctx.tensor_device)

    def gpu_sample(self) -> None:
        self.sampler.draw(self.shard_rows, self.idx)
        torch.index_select(self.table, 0, self.idx, out=self.out)

    def last_indices(self) -> torch.Tensor:
        return self.idx + self.first_row


class ShardedGlobalRank(RankLocalRank):
    """Global uniform indices over all shards, served by their owners through all-to-all."""

    def setup(self) -> None:
        super().setup()
        self.calls = self.rows_in = self.rows_out = self.rows_served = 0

    def gpu_sample(self) -> None:
        self.sampler.draw(self.capacity_rows, self.idx)
        counts = gather_global(self.table, self.idx, self.out, shard_rows=self.shard_rows, rank=self.ctx.rank,
                               world=self.ctx.world, group=self.ctx.data_group)
        self.calls += 1
        self.rows_in += counts.rows_in
        self.rows_out += counts.rows_out
        self.rows_served += counts.rows_served

    def last_indices(self) -> torch.Tensor:
        return self.idx

    def bytes_per_sample(self) -> dict[str, float]:
        """Means over every call so far: the remote share is random, (N-1)/N in expectation."""
        row, calls = self.layout.stored_row_bytes, max(self.calls, 1)
        return {"h2d": 0, "host_read": 0,
                "device_read": (self.rows_served / calls + self.sample_rows) * row,  # shard gather + reorder
                "interconnect_in": (self.rows_in * row + self.rows_out * INDEX_BYTES) / calls,
                "interconnect_out": (self.rows_out * row + self.rows_in * INDEX_BYTES) / calls}

    def traffic(self) -> dict[str, float]:
        return self.bytes_per_sample()
