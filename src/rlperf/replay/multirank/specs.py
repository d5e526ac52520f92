"""What each rank-level placement is, needs and reports, without importing torch.

Memory is per machine for the host (one shared table plus per-rank staging) and per GPU for the
device, so one guard answers for every rank. The single-GPU `PlacementSpec` contract is reused
through duck typing (name, metrics, stored_layout, world_size, multi_rank), so rank implementations
subclass the existing single-GPU placements; `rlperf.replay.registry.REGISTRY` lists both kinds.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.replay.placements.specs import INDEX_BYTES
from rlperf.row_layout import RowLayout

# sharded-global buffers besides the shard: the batch, the rows received, and the rows served to
# peers (expected S, budgeted 2 S for imbalance), plus int64 index/order/request buffers.
SHARDED_BATCH_BUFFERS = 4
SHARDED_INDEX_BUFFERS = 4


@dataclass(frozen=True)
class RankMemoryNeed:
    host_bytes: int  # on the whole machine (the shared table counts once)
    device_bytes: int  # on each rank's GPU
    shm_bytes: int = 0  # the part of host_bytes that lives in /dev/shm


def _shared_host(row: int, capacity_rows: int, s: int, n: int) -> RankMemoryNeed:
    """One shared table; per rank a pinned staging batch + indices on the host, one device batch."""
    return RankMemoryNeed(capacity_rows * row + n * (s * row + s * INDEX_BYTES), s * row,
                          shm_bytes=capacity_rows * row)


def _replica(row: int, capacity_rows: int, s: int, n: int) -> RankMemoryNeed:
    """The reference guard on every GPU: full table + two batches + indices."""
    return RankMemoryNeed(0, capacity_rows * row + 2 * s * row + s * INDEX_BYTES)


def _rank_local(row: int, capacity_rows: int, s: int, n: int) -> RankMemoryNeed:
    return RankMemoryNeed(0, capacity_rows // n * row + 2 * s * row + s * INDEX_BYTES)


def _sharded(row: int, capacity_rows: int, s: int, n: int) -> RankMemoryNeed:
    return RankMemoryNeed(0, capacity_rows // n * row + SHARDED_BATCH_BUFFERS * s * row
                          + SHARDED_INDEX_BUFFERS * s * INDEX_BYTES)


@dataclass(frozen=True)
class RankSpec:
    name: str
    summary: str
    metrics: tuple[str, ...]
    impl: str  # "module:Class", imported only inside rank processes
    memory: Callable[[int, int, int, int], RankMemoryNeed]
    sharded: bool = False  # capacity split in world-size shards (needs capacity % world == 0)
    shared_host_table: bool = False  # the launcher creates and fills one shared host table
    align_bytes: int = 0
    world_size: int = 0  # as PlacementSpec.world_size: 0, any number of ranks, one process each

    @property
    def multi_rank(self) -> bool:
        return self.world_size != 1

    def stored_layout(self, layout: RowLayout) -> RowLayout:
        return layout.padded(self.align_bytes) if self.align_bytes else layout

    def memory_need(self, layout: RowLayout, capacity_rows: int, sample_rows: int, world: int) -> RankMemoryNeed:
        return self.memory(self.stored_layout(layout).stored_row_bytes, capacity_rows, sample_rows, world)

    def unavailable_reason(self) -> str | None:
        return None

    def load(self):
        module, cls = self.impl.split(":")
        return getattr(importlib.import_module(module), cls)


_P = "rlperf.replay.multirank.placements:"
RANK_SPECS: dict[str, RankSpec] = {s.name: s for s in (
    RankSpec("shared-host", "one shared-memory host table for all ranks; each rank gathers its S rows "
             "with its own threads into pinned staging, then H2D to its GPU",
             (CPU_SAMPLE, H2D, END_TO_END), _P + "SharedHostRank", _shared_host, shared_host_table=True),
    RankSpec("gpu-replica", "a full replay copy on every GPU; device randint + index_select per rank",
             (GPU_SAMPLE,), _P + "GpuReplicaRank", _replica),
    RankSpec("rank-local", "each rank keeps only its own envs' rows (capacity / N) and samples them "
             "locally; no exchange, globally uniform only if shards are iid",
             (GPU_SAMPLE,), _P + "RankLocalRank", _rank_local, sharded=True),
    RankSpec("sharded-global", "capacity / N rows per rank; global uniform indices served by their owners "
             "through all-to-all of indices, then of rows ((N-1)/N of each batch remote)",
             (GPU_SAMPLE,), _P + "ShardedGlobalRank", _sharded, sharded=True),
)}
