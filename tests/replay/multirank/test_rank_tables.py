"""rank_tables: the shared host table lives in shared memory, filled, with global row ids."""

from __future__ import annotations

import torch

from rlperf.replay.multirank.rank_tables import shared_host_table
from rlperf.replay.tables import row_ids


def test_the_shared_table_is_in_shared_memory_with_every_page_written():
    t = shared_host_table(512, 930)
    assert t.is_shared() and torch.equal(row_ids(t), torch.arange(512)) and bool((t[:, 1:] != 0).all())


def test_a_shard_is_the_same_rows_of_the_whole_table_with_their_global_ids():
    from rlperf.replay.multirank.rank_tables import shard_table
    from rlperf.replay.tables import fill_pattern_

    shard = shard_table(16, 8, 32, "cpu")
    whole = fill_pattern_(torch.empty((64, 8), dtype=torch.float32))
    assert torch.equal(row_ids(shard), torch.arange(32, 48)) and torch.equal(shard, whole[32:48])
