"""result.assemble: the exposed time of each iteration is the slowest rank's, with who it was."""

from __future__ import annotations

import pytest

from rlperf.replay.metrics import GPU_SAMPLE
from rlperf.replay.multirank import RANK_SPECS
from rlperf.replay.multirank.result import assemble
from tests.replay.multirank.tiny import TinyCase, cpu_run


@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_the_exposed_time_is_the_slowest_rank_of_each_iteration(placement):
    res = cpu_run(placement).result
    for metric, t in res["timings"].items():
        per_rank = [r["timings"][metric]["samples_ms"] for r in res["per_rank"]]
        assert t["samples_ms"] == [max(col) for col in zip(*per_rank)]
        assert [per_rank[who][i] for i, who in enumerate(t["slowest_rank"])] == t["samples_ms"]
        for r in res["per_rank"]:
            barrier = r["timings"][metric]["barrier_ms"]
            assert len(barrier["samples_ms"]) == 4 and barrier["min_ms"] >= 0


def _rank(rank: int, samples: list[float], device_read: float, *, verified: bool = True) -> dict:
    return {"rank": rank, "device": "cpu", "backend": "gloo", "threads": 1, "numa_node": 0, "cores": [rank],
            "setup_s": 0.5 + rank, "verified": verified,
            "traffic": {"h2d": 0.0, "host_read": 0.0, "device_read": device_read, "interconnect_in": 0.0,
                        "interconnect_out": 0.0},
            "timings": {GPU_SAMPLE: {"samples_ms": samples, "barrier_ms": [0.1] * len(samples)}}}


def test_assemble_reports_the_slowest_rank_the_slowest_setup_and_summed_traffic():
    case = TinyCase("rank-local")
    spec = RANK_SPECS["rank-local"]
    res = assemble(case, spec, [_rank(0, [1.0, 3.0, 2.0], 100.0), _rank(1, [2.0, 1.0, 2.5], 300.0)],
                   warmup=1, repeat=3, ceilings=None)
    t = res["timings"][GPU_SAMPLE]
    assert (t["samples_ms"], t["slowest_rank"], t["median_ms"]) == ([2.0, 3.0, 2.5], [1, 0, 1], 2.5)
    assert res["setup_s"] == 1.5 and res["verified"] is True and res["rank_device"] == "cpu"
    stored = spec.stored_layout(case.workload.layout).stored_row_bytes
    assert res["replay_bytes_per_rank"] == case.capacity_rows // 2 * stored  # a shard, not the whole table
    assert res["traffic"]["measured"]["global"]["device_read"] == 400.0
    model = res["traffic"]["model"]
    assert model["global"] == {k: 2 * v for k, v in model["per_rank"].items()}
    assert [r["timings"][GPU_SAMPLE]["barrier_ms"]["samples_ms"] for r in res["per_rank"]] == [[0.1] * 3] * 2


def test_one_unverified_rank_marks_the_whole_entry_and_a_replica_holds_the_whole_table():
    spec = RANK_SPECS["gpu-replica"]
    case = TinyCase("gpu-replica")
    res = assemble(case, spec, [_rank(0, [1.0], 1.0), _rank(1, [1.0], 1.0, verified=False)], warmup=0,
                   repeat=1, ceilings=None)
    assert res["verified"] is False
    stored = spec.stored_layout(case.workload.layout).stored_row_bytes
    assert res["replay_bytes_per_rank"] == case.capacity_rows * stored
