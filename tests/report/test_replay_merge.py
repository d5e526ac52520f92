"""Parts of one replay sweep split by capacity merge into one document; anything else is refused."""

from __future__ import annotations

import pytest

from rlperf.errors import UsageError
from rlperf.report.replay_merge import merge_replay_docs


def _doc(caps, placements=("gpu", "host"), machine="m", seed=1):
    return {"schema": "rlperf.replay", "schema_version": 1, "workload": {"task": "t"}, "machine": {"name": machine},
            "command": f"rlperf replay --capacity-rows {caps}", "created_at": "t0", "ceilings": {"d2d_Bps": 1.0},
            "args": {"task": "t", "sim": "s", "gpu_counts": [1], "warmup": 1, "repeat": 2, "seed": seed,
                     "capacity_rows": list(caps), "placements": list(placements)},
            "results": [{"placement": p, "capacity_rows": c, "world_size": 1} for c in caps for p in placements],
            "skipped": [{"placement": "x", "capacity_rows": c, "reason": "r"} for c in caps]}


def test_parts_merge_in_measurement_order_and_keep_their_provenance():
    merged = merge_replay_docs([_doc([16, 64]), _doc([32])], ["a.json", "b.json"])
    assert [(r["capacity_rows"], r["placement"]) for r in merged["results"]] == [
        (16, "gpu"), (16, "host"), (32, "gpu"), (32, "host"), (64, "gpu"), (64, "host")]
    assert merged["args"]["capacity_rows"] == [16, 32, 64] and len(merged["skipped"]) == 3
    assert [p["file"] for p in merged["parts"]] == ["a.json", "b.json"]


def test_a_merged_report_merges_again_with_new_placements_keeping_every_part():
    report = merge_replay_docs([_doc([16]), _doc([32])], ["a.json", "b.json"])
    added = _doc([16, 32], placements=("uva-fused",))
    merged = merge_replay_docs([report, added], ["results.json", "c.json"])
    assert [p["file"] for p in merged["parts"]] == ["a.json", "b.json", "c.json"]
    assert merged["args"]["placements"] == ["gpu", "host", "uva-fused"]
    assert [(r["capacity_rows"], r["placement"]) for r in merged["results"]] == [
        (16, "gpu"), (16, "host"), (16, "uva-fused"), (32, "gpu"), (32, "host"), (32, "uva-fused")]


@pytest.mark.parametrize("other", [_doc([32], seed=2), _doc([32], machine="n"), _doc([16])])
def test_parts_of_different_sweeps_or_the_same_point_twice_are_refused(other):
    with pytest.raises(UsageError):
        merge_replay_docs([_doc([16]), other], ["a.json", "b.json"])
