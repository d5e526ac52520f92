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


def test_a_later_part_replaces_earlier_points_only_with_a_reason_and_keeps_them():
    report = merge_replay_docs([_doc([16]), _doc([32])], ["a.json", "b.json"])
    again = _doc([16, 64], placements=("gpu",))
    again["results"][0]["ms"] = 0.5
    with pytest.raises(UsageError, match="--replace"):
        merge_replay_docs([report, again], ["results.json", "d.json"])
    with pytest.raises(UsageError, match="say why"):
        merge_replay_docs([report, again], ["results.json", "d.json"], replace_reason=" ")
    merged = merge_replay_docs([report, again], ["results.json", "d.json"], replace_reason="gpu's kernel changed")
    assert [(r["capacity_rows"], r["placement"], r.get("ms")) for r in merged["results"]] == [
        (16, "gpu", 0.5), (16, "host", None), (32, "gpu", None), (32, "host", None), (64, "gpu", None)]
    assert [(e["result"]["capacity_rows"], e["in"], e["by"], e["reason"]) for e in merged["replaced"]
            if "result" in e] == [(16, "results.json", "d.json", "gpu's kernel changed")]
    assert [p["file"] for p in merged["parts"]] == ["a.json", "b.json", "d.json"]
    # a skipped point is a point too: the later part's skip replaces the earlier one
    assert sorted(s["capacity_rows"] for s in merged["skipped"]) == [16, 32, 64]
    assert [(e["skipped"]["placement"], e["skipped"]["capacity_rows"]) for e in merged["replaced"]
            if "skipped" in e] == [("x", 16)]


def test_take_gives_only_the_named_placements_of_the_later_parts_and_says_so():
    report = merge_replay_docs([_doc([16]), _doc([32])], ["a.json", "b.json"])
    again = _doc([16], placements=("gpu", "uva-fused"))
    merged = merge_replay_docs([report, again], ["results.json", "d.json"], replace_reason="gpu changed", take=["gpu"])
    assert [(r["capacity_rows"], r["placement"]) for r in merged["results"]] == [
        (16, "gpu"), (16, "host"), (32, "gpu"), (32, "host")]
    assert merged["parts"][-1]["placements_taken"] == ["gpu"] and "placements_taken" not in merged["parts"][0]
    assert merged["command"].endswith("--capacity-rows [16] [points taken: gpu]")  # the command says it too
    assert merged["args"]["placements"] == ["gpu", "host"]
    with pytest.raises(UsageError, match="did not measure host"):
        merge_replay_docs([report, again], ["results.json", "d.json"], replace_reason="r", take=["host"])


def test_the_analysis_lists_each_replaced_point_with_its_old_median_and_the_reason():
    from rlperf.report.replay_markdown import analysis_lines

    report = merge_replay_docs([_doc([16]), _doc([32])], ["a.json", "b.json"])
    report["results"][0]["timings"] = {"gpu_sample_wall": {"samples_ms": [0.07, 0.066, 0.066]}}
    again = _doc([16], placements=("gpu",))
    merged = merge_replay_docs([report, again], ["results.json", "d.json"], replace_reason="its kernel changed",
                               take=["gpu"])
    merged.update(command="rlperf replay", device_info="test", args=dict(merged["args"], torch_threads=1),
                  workload={"sample_rows_per_rank": 4, "sample_bytes_per_rank": 1, "row_floats": 1, "row_bytes": 4,
                            "collector_rows_per_iteration": 2, "sample_new_ratio_per_rank": 2}, results=[], skipped=[])
    lines = analysis_lines(merged)
    assert "## Replaced by a later part" in lines
    assert ("- gpu, 1 GPU(s), 16 rows (GPU sample median 0.066 ms; results.json), replaced by d.json: its kernel "
            "changed") in lines
