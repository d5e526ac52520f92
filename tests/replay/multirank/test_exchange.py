"""exchange.gather_global in a 1-rank gloo world: every row comes back in draw order and nothing crosses
between ranks. The 2-rank exchange is verified by the sharded-global run (test_placements.py)."""

from __future__ import annotations

import torch

from rlperf.replay.multirank.exchange import ExchangeCounts, gather_global
from rlperf.replay.multirank.rank_tables import shard_table


def test_a_single_owner_serves_every_row_itself_in_draw_order(one_rank):
    shard = shard_table(64, 8, 0, "cpu")
    idx = torch.tensor([5, 63, 0, 5, 17])
    out = torch.empty(5, 8)
    counts = gather_global(shard, idx, out, shard_rows=64, rank=0, world=1, group=one_rank.data_group)
    assert torch.equal(out, shard[idx])
    assert (counts.rows_in, counts.rows_out, counts.rows_served) == (0, 0, 5)
    assert counts.indices_in == counts.indices_out == 0


def test_requests_mirror_rows_one_index_per_row():
    counts = ExchangeCounts(rows_in=3, rows_out=5, rows_served=9)
    assert (counts.indices_out, counts.indices_in) == (3, 5)  # asked for what came in, answered what went out
