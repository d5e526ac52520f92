"""affinity: ranks go to their GPU's NUMA node in blocks, then share that node's cores evenly."""

from __future__ import annotations

from rlperf.replay.multirank.affinity import rank_cores


def test_ranks_bind_to_their_gpus_numa_node_in_blocks(monkeypatch):
    from rlperf.replay.multirank import affinity

    monkeypatch.setattr(affinity, "numa_nodes", lambda visible: [list(range(0, 8)), list(range(8, 16))])
    got = [rank_cores(r, 4, set(range(16))) for r in range(4)]
    assert got == [(0, [0, 1, 2, 3]), (0, [4, 5, 6, 7]), (1, [8, 9, 10, 11]), (1, [12, 13, 14, 15])]
    assert rank_cores(0, 1, set(range(16))) == (0, list(range(8)))


def test_cpulists_read_ranges_and_single_cores():
    from rlperf.replay.multirank.affinity import _parse_cpulist

    assert _parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert _parse_cpulist("\n") == []


def test_numa_nodes_keep_visible_cores_in_node_order_and_fall_back_to_one_group(tmp_path, monkeypatch):
    from rlperf.replay.multirank import affinity

    for node, cpus in (("node0", "0-3"), ("node2", "8-11"), ("node10", "4-7"), ("node3", "12-15")):
        (tmp_path / node).mkdir()
        (tmp_path / node / "cpulist").write_text(cpus + "\n")
    real_glob = affinity.glob.glob
    monkeypatch.setattr(affinity.glob, "glob", lambda pattern: real_glob(str(tmp_path / "node[0-9]*" / "cpulist")))
    # node10 sorts after node3 (numerically); node3's cores are not visible, so it is left out
    assert affinity.numa_nodes({0, 1, 4, 5, 8, 9}) == [[0, 1], [8, 9], [4, 5]]
    monkeypatch.setattr(affinity.glob, "glob", lambda pattern: [])
    assert affinity.numa_nodes({3, 1, 2}) == [[1, 2, 3]]


def test_more_ranks_than_cores_share_them_one_core_each(monkeypatch):
    from rlperf.replay.multirank import affinity

    monkeypatch.setattr(affinity, "numa_nodes", lambda visible: [[0, 1]])
    assert [rank_cores(r, 4, {0, 1}) for r in range(4)] == [(0, [0]), (0, [1]), (0, [0]), (0, [1])]
