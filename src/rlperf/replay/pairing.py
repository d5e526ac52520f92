"""Two storages written by the same steps, read at the same indices: the consistency check's input.

The SAC-statistics comparison (fp32 packed against bf16 compact) needs batches that differ only in
their layout. `PairedStorages.add` writes one step to both; `batches(indices)` returns both batches,
decoded to the learner's dtype. Both storages advance in lockstep, so any index one may sample the
other may too.
"""

from __future__ import annotations

import torch

from rlperf.replay.layouts import storage_layout
from rlperf.replay.storage import Batch, Storage
from rlperf.row_layout import RowLayout


class PairedStorages:
    def __init__(self, dims: RowLayout, capacity_rows: int, step_rows: int, *, layouts=("fp32", "compact"),
                 kind: str = "host", device: str | torch.device | None = None, terminal_rows: int | None = None):
        self.storages = tuple(Storage(storage_layout(name, dims), capacity_rows, kind=kind, device=device,
                                      step_rows=step_rows, terminal_rows=terminal_rows) for name in layouts)

    def add(self, **step) -> None:
        """One vector step into every storage (the `Storage.add` keywords)."""
        for storage in self.storages:
            storage.add(**step)

    def sampleable(self) -> tuple[int, int]:
        return self.storages[0].sampleable()

    def batches(self, indices: torch.Tensor, dtype: torch.dtype = torch.float32) -> tuple[Batch, ...]:
        """Each storage's batch for the same `indices`, as the learner receives it."""
        return tuple(s.decode(s.gather(indices, s.new_batch(indices.numel())), dtype) for s in self.storages)


__all__ = ["PairedStorages"]
