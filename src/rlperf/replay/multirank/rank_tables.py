"""Rank tables with the same checkable pattern as replay.tables, but global row ids and shared memory.

Column 0 holds the *global* row id (int32 bits), so a shard's rows and a shared table's rows are
verified against the global indices a rank drew. The shared host table is allocated directly in
shared memory (share_memory_ on a fresh tensor, then filled in place), so a table of hundreds of GiB
is never held twice.
"""

from __future__ import annotations

import torch

from rlperf.replay.tables import fill_pattern_


def shard_table(rows: int, width: int, first_id: int, device) -> torch.Tensor:
    """The shard of global rows [first_id, first_id + rows) on `device`."""
    return fill_pattern_(torch.empty((rows, width), dtype=torch.float32, device=device), first_id)


def shared_host_table(rows: int, width: int) -> torch.Tensor:
    """A filled `(rows, width)` table in shared memory; passed to spawned ranks by file descriptor."""
    return fill_pattern_(torch.empty((rows, width), dtype=torch.float32).share_memory_())
