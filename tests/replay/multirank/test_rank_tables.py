"""rank_tables: the shared host table lives in shared memory, filled, with global row ids."""

from __future__ import annotations

import torch

from rlperf.replay.multirank.rank_tables import shared_host_table
from rlperf.replay.tables import row_ids


def test_the_shared_table_is_in_shared_memory_with_every_page_written():
    t = shared_host_table(512, 930)
    assert t.is_shared() and torch.equal(row_ids(t), torch.arange(512)) and bool((t[:, 1:] != 0).all())
