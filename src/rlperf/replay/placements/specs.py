"""What each placement is, needs and reports, without importing torch.

The asv suite spawns one process per parameter point; most points on a given machine are skips
(too many GPUs, too little memory). Deciding them from this table keeps a skip at a fraction of a
second, and the implementation (which imports torch) is loaded only for points that run.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

from rlperf.replay.layout import RowLayout
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D

INDEX_BYTES = 8  # int64 sample indices
CACHE_ROWS_MAX = 2**22  # gpu-cache: M, the cached rows (15.6 GB of padded motion-tracking rows)
REFRESH_PERIOD = 256  # gpu-cache: K, learner iterations per full cache refresh


@dataclass(frozen=True)
class MemoryNeed:
    host_bytes: int
    device_bytes: int


def _host_gather(row: int, cap: int, s: int) -> MemoryNeed:
    """Host table + host staging batch + indices; one device batch."""
    return MemoryNeed(cap * row + s * row + s * INDEX_BYTES, s * row)


def _device_ring(row: int, cap: int, s: int) -> MemoryNeed:
    """The reference guard: device table + two batches + indices."""
    return MemoryNeed(0, cap * row + 2 * s * row + s * INDEX_BYTES)


def _zero_copy(row: int, cap: int, s: int) -> MemoryNeed:
    """Pinned host table; device batch + indices."""
    return MemoryNeed(cap * row, s * row + s * INDEX_BYTES)


def _device_cache(row: int, cap: int, s: int) -> MemoryNeed:
    """Pinned host table; device cache of min(C, M) rows + batch + indices."""
    return MemoryNeed(cap * row, (min(cap, CACHE_ROWS_MAX) + s) * row + s * INDEX_BYTES)


@dataclass(frozen=True)
class PlacementSpec:
    name: str
    summary: str
    metrics: tuple[str, ...]
    impl: str  # "module:Class", imported only when the placement runs
    memory: Callable[[int, int, int], MemoryNeed]
    needs_cuda: bool = False
    align_bytes: int = 0
    requires: tuple[str, ...] = ()  # importable modules the implementation needs

    def stored_layout(self, layout: RowLayout) -> RowLayout:
        return layout.padded(self.align_bytes) if self.align_bytes else layout

    def memory_need(self, layout: RowLayout, capacity: int, sample_rows: int) -> MemoryNeed:
        """Bytes the placement allocates, checked by the guards before anything is allocated."""
        return self.memory(self.stored_layout(layout).stored_row_bytes, capacity, sample_rows)

    def unavailable_reason(self) -> str | None:
        """Why it cannot run in this environment at all (a missing library), else None."""
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        return f"placement {self.name!r} needs {', '.join(missing)}; not installed" if missing else None

    def load(self):
        module, cls = self.impl.split(":")
        return getattr(importlib.import_module(module), cls)


_P = "rlperf.replay.placements."
SPECS: dict[str, PlacementSpec] = {s.name: s for s in (
    PlacementSpec("host", "host table, CPU gather (torch threads) -> pinned staging -> H2D on a copy stream",
                  (CPU_SAMPLE, H2D, END_TO_END), _P + "host:HostReplay", _host_gather),
    PlacementSpec("host-pageable", "host table, CPU gather -> pageable staging -> H2D (driver bounce buffers)",
                  (CPU_SAMPLE, H2D, END_TO_END), _P + "host:HostPageableReplay", _host_gather),
    PlacementSpec("host-pipelined", "host table, 8-chunk pipeline: CPU gather of chunk k+1 overlaps the H2D "
                  "of chunk k (pinned)", (END_TO_END,), _P + "host:HostPipelinedReplay", _host_gather),
    PlacementSpec("uva", "pinned host table read directly by a GPU gather kernel (zero-copy, no CPU gather)",
                  (END_TO_END,), _P + "uva:UvaReplay", _zero_copy, needs_cuda=True, align_bytes=16,
                  requires=("cupy",)),
    PlacementSpec("gpu", "GPU-resident ring (packed rows), device randint + index_select(out=)",
                  (GPU_SAMPLE,), _P + "gpu:GpuReplay", _device_ring, needs_cuda=True),
    PlacementSpec("gpu-padded", "GPU-resident ring, rows padded to a 16-byte multiple (930 -> 932 floats)",
                  (GPU_SAMPLE,), _P + "gpu:GpuReplay", _device_ring, needs_cuda=True, align_bytes=16),
    PlacementSpec("gpu-fused", "GPU-resident ring (packed rows), one kernel: counter-based indices + "
                  "8-byte vector row copy", (GPU_SAMPLE,), _P + "fused:GpuFusedReplay", _device_ring,
                  needs_cuda=True, requires=("cupy",)),
    PlacementSpec("gpu-fused-padded", "GPU-resident ring, rows padded to 932 floats, one kernel: "
                  "counter-based indices + 16-byte vector row copy", (GPU_SAMPLE,), _P + "fused:GpuFusedReplay",
                  _device_ring, needs_cuda=True, align_bytes=16, requires=("cupy",)),
    PlacementSpec("gpu-cache", f"pinned host table + GPU cache of min(C, {CACHE_ROWS_MAX:,}) rows, "
                  f"1/{REFRESH_PERIOD} refreshed per iteration by DMA, overlapped with the cache gather",
                  (END_TO_END,), _P + "cache:GpuCacheReplay", _device_cache, needs_cuda=True, align_bytes=16),
)}
