"""Host-authoritative replay + a GPU learner cache refreshed in bulk (docs/limits.md 2.4).

The pinned host table stays authoritative; the GPU holds a cache of M rows. Every learner iteration a
contiguous block of M / K cache rows is refreshed from the host by copy-engine DMA on a copy stream
(no CPU cores), while the learner samples uniformly from the cache on its own stream (the cache's slots, not the
storage's sampleable rows: the newest-step rule does not apply to a cache). Samples come
from a rotating subset rather than all C rows: a statistical difference to declare, not hide.
It moves fewer PCIe bytes than direct host sampling only when K > M / S.
"""

from __future__ import annotations

import torch

from rlperf.replay.placements.base import Placement
from rlperf.replay.placements.specs import CACHE_ROWS_MAX, REFRESH_PERIOD


class GpuCacheReplay(Placement):
    def setup(self) -> None:
        self.make_storage()  # host-pinned, authoritative
        self.m = min(self.capacity_rows, CACHE_ROWS_MAX)
        self.block = max(1, self.m // REFRESH_PERIOD)
        self.cache = self.table[: self.m].to(self.device)
        self.cache_origin = torch.arange(self.m, dtype=torch.int64, device=self.device)  # host row of each slot
        self.out = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32,
                               device=self.device)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=self.device)
        self.make_sampler(self.device)
        self.copy_stream = torch.cuda.Stream(self.device)
        self.learn_stream = torch.cuda.Stream(self.device)
        self.slot = 0  # next cache block to refresh
        self.src = 0  # next host row to bring in
        torch.cuda.synchronize(self.device)

    def _next_block(self) -> tuple[int, int, int]:
        """(cache lo, cache hi, host src) of the block to refresh now; blocks never straddle an end."""
        lo = self.slot * self.block
        hi = min(lo + self.block, self.m)
        src = self.src if self.src + (hi - lo) <= self.capacity_rows else 0
        return lo, hi, src

    def sample(self) -> torch.Tensor:
        """Gather from every cache block except the one being refreshed, while its DMA runs."""
        lo, hi, src = self._next_block()
        with torch.cuda.stream(self.learn_stream):
            self.sampler.draw(self.m - (hi - lo), self.idx)
            self.idx.add_(hi).remainder_(self.m)  # skip [lo, hi): uniform over the other slots
            torch.index_select(self.cache, 0, self.idx, out=self.out)
            self.batch_origin = self.cache_origin[self.idx]
        with torch.cuda.stream(self.copy_stream):
            self.cache[lo:hi].copy_(self.table[src: src + hi - lo], non_blocking=True)
            self.cache_origin[lo:hi] = torch.arange(src, src + hi - lo, device=self.device)
        self.slot = (self.slot + 1) % -(-self.m // self.block)
        self.src = (src + hi - lo) % self.capacity_rows
        self.learn_stream.synchronize()
        self.copy_stream.synchronize()
        return self.batch

    def last_indices(self) -> torch.Tensor:
        """Host row ids of the last batch (the cache maps slots to host rows)."""
        return self.batch_origin

    def bytes_per_sample(self) -> dict[str, int]:
        row = self.layout.stored_row_bytes
        return {"h2d": self.block * row, "host_read": self.block * row,
                "device_read": self.sample_rows * self.layout.batch_row_bytes}
