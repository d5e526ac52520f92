"""affinity: ranks go to their GPU's NUMA node in blocks, then share that node's cores evenly."""

from __future__ import annotations

from rlperf.replay.multirank.affinity import rank_cores


def test_ranks_bind_to_their_gpus_numa_node_in_blocks(monkeypatch):
    from rlperf.replay.multirank import affinity

    monkeypatch.setattr(affinity, "numa_nodes", lambda visible: [list(range(0, 8)), list(range(8, 16))])
    got = [rank_cores(r, 4, set(range(16))) for r in range(4)]
    assert got == [(0, [0, 1, 2, 3]), (0, [4, 5, 6, 7]), (1, [8, 9, 10, 11]), (1, [12, 13, 14, 15])]
    assert rank_cores(0, 1, set(range(16))) == (0, list(range(8)))
