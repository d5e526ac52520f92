"""The reference benchmark's host path as a peer (`reference-host`): what rlperf's `host` is judged against.

docs/workloads.md A8, rank 0 of one GPU: one pageable float32 table `(capacity, W)`, written before
timing; `randint(capacity, (S,), generator=g, out=idx)` into a preallocated index tensor, then
`index_select(table, 0, idx, out=staging)` into pinned staging on torch's intra-op threads; H2D is
`target.copy_(staging, non_blocking=True)` on a side stream. None of rlperf's Storage, sampler or
allocation choices: a plain torch table, drawn over the whole capacity as the reference draws. Its rows
carry the checkable pattern (replay.tables) instead of the reference's zeros, so a batch can be verified.
"""

from __future__ import annotations

import torch

from rlperf.replay.placements.host import HostReplay
from rlperf.replay.tables import fill_pattern_


class ReferenceHost(HostReplay):
    """HostReplay's timing and H2D (the same calls the reference makes); its own table and draw."""

    def setup(self) -> None:
        torch.set_num_threads(self.threads)
        cuda = self.device is not None and self.device.type == "cuda"
        self.table = fill_pattern_(torch.empty((self.capacity_rows, self.layout.stored_width), dtype=torch.float32))
        self.gen = torch.Generator().manual_seed(self.seed)  # the reference's host generator, rank 0
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64)
        self.staging = torch.empty((self.sample_rows, self.layout.batch_width), dtype=torch.float32, pin_memory=cuda)
        self.staging.fill_(0)
        if cuda:
            self.target = torch.empty_like(self.staging, device=self.device)
            self.stream = torch.cuda.Stream(self.device)

    def cpu_sample(self) -> torch.Tensor:
        torch.randint(self.capacity_rows, (self.sample_rows,), generator=self.gen, out=self.idx)
        return torch.index_select(self.table, 0, self.idx, out=self.staging)

    @property
    def storage_bytes(self) -> int:
        return self.table.numel() * self.table.element_size()


__all__ = ["ReferenceHost"]
