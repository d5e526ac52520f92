"""A wrongly measured ceiling is withdrawn with its floors, and nothing else changes (report.replay_withdraw)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlperf.errors import UsageError
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE
from rlperf.replay.records import timing_entry
from rlperf.report.replay_withdraw import raise_ceiling, withdraw_ceiling

ROOT = Path(__file__).resolve().parents[2]
CEIL = {"host_copy_Bps": 100e9, "h2d_pinned_Bps": 50e9, "d2d_Bps": 3e12}


def _doc() -> dict:
    def entry(metric, moved, resources=None, ms=(1.0, 1.0)):
        return timing_entry(list(ms), metric, moved, warmup=0, repeat=2, ceilings=CEIL, clock="c", resources=resources)

    gpu = {GPU_SAMPLE: entry(GPU_SAMPLE, 240e6, {"d2d_Bps": 240e6}, ms=(0.07, 0.07))}
    host = {CPU_SAMPLE: entry(CPU_SAMPLE, 240e6, {"host_copy_Bps": 240e6}),
            END_TO_END: entry(END_TO_END, 120e6, {"h2d_pinned_Bps": 120e6, "d2d_Bps": 0}, ms=(5.0, 5.0))}
    cache = {END_TO_END: entry(END_TO_END, 1e6, {"h2d_pinned_Bps": 1e6, "d2d_Bps": 240e6}, ms=(0.5, 0.5))}
    return {"schema": "rlperf.replay", "ceilings": dict(CEIL, method="m"),
            "results": [{"placement": "gpu-fused", "capacity_rows": 8, "timings": gpu},
                        {"placement": "host", "capacity_rows": 8, "timings": host},
                        {"placement": "gpu-cache", "capacity_rows": 8, "timings": cache}]}


def test_the_ceiling_and_the_floors_on_it_go_and_every_other_floor_stays():
    doc = _doc()
    assert doc["results"][2]["timings"][END_TO_END]["floor_ms"] == pytest.approx(0.08)  # the cache's HBM gather ruled
    out = withdraw_ceiling(doc, "d2d_Bps", "timed before the clocks ramped")
    assert "d2d_Bps" not in out["ceilings"] and out["ceilings"]["method"] == "m"
    assert out["withdrawn_ceilings"] == {"d2d_Bps": {"value": 3e12, "reason": "timed before the clocks ramped"}}
    gpu, host, cache = (r["timings"] for r in out["results"])
    assert "floor_ms" not in gpu[GPU_SAMPLE] and "x_floor" not in gpu[GPU_SAMPLE]
    assert host == doc["results"][1]["timings"]  # host copy and PCIe floors are untouched
    assert cache[END_TO_END]["floor_ms"] == pytest.approx(1e6 / 50e9 * 1e3)  # now its PCIe refresh alone
    assert cache[END_TO_END]["x_floor"] == pytest.approx(0.5 / cache[END_TO_END]["floor_ms"])
    assert "floor_ms" in doc["results"][0]["timings"][GPU_SAMPLE]  # the input is not changed


def test_bad_requests_are_refused_with_the_reason():
    doc = _doc()
    with pytest.raises(UsageError, match="unknown ceiling 'hbm'; valid: host_copy_Bps, h2d_pinned_Bps, d2d_Bps"):
        withdraw_ceiling(doc, "hbm", "x")
    with pytest.raises(UsageError, match="say why"):
        withdraw_ceiling(doc, "d2d_Bps", " ")
    with pytest.raises(UsageError, match="withdraw from each part, then merge"):
        withdraw_ceiling(dict(doc, parts=[]), "d2d_Bps", "x")
    no_gpu = dict(doc, ceilings={"host_copy_Bps": 1e9})
    with pytest.raises(UsageError, match="no d2d_Bps ceiling to withdraw"):
        withdraw_ceiling(no_gpu, "d2d_Bps", "x")
    doc["results"][1]["timings"][CPU_SAMPLE]["floor_ms"] = 9.0  # a floor that is not its ceiling's: not this run's
    with pytest.raises(UsageError, match="host 8 cpu_sample_wall: its floor 9.0 does not come from its own ceiling"):
        withdraw_ceiling(doc, "d2d_Bps", "x")


def test_the_script_writes_a_new_file_only(tmp_path):
    src, out = tmp_path / "run.json", tmp_path / "new.json"
    src.write_text(json.dumps(dict(_doc(), schema_version=1)))
    script = [sys.executable, str(ROOT / "scripts" / "withdraw_replay_ceiling.py"), str(src), "--ceiling", "d2d_Bps",
              "--reason", "cold clocks", "--out", str(out)]
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert json.loads(out.read_text())["withdrawn_ceilings"]["d2d_Bps"]["reason"] == "cold clocks"
    again = subprocess.run(script, capture_output=True, text=True)
    assert again.returncode == 2 and "exists; not overwritten" in again.stderr


def test_a_raised_ceiling_lowers_only_the_floors_it_bounds_and_keeps_what_was_measured():
    doc = _doc()
    out = raise_ceiling(doc, "d2d_Bps", 4e12, "part-b.json (t)", "the best device copy of the sweep")
    assert out["ceilings"]["d2d_Bps"] == 4e12 and doc["ceilings"]["d2d_Bps"] == 3e12
    assert out["raised_ceilings"] == {"d2d_Bps": {"measured": 3e12, "value": 4e12, "from": "part-b.json (t)",
                                                  "reason": "the best device copy of the sweep"}}
    gpu, host, cache = (r["timings"] for r in out["results"])
    assert gpu[GPU_SAMPLE]["floor_ms"] == pytest.approx(240e6 / 4e12 * 1e3)
    assert gpu[GPU_SAMPLE]["x_floor"] == pytest.approx(0.07 / 0.06)
    assert host == doc["results"][1]["timings"]  # host copy and PCIe floors are untouched
    assert cache[END_TO_END]["floor_ms"] == pytest.approx(240e6 / 4e12 * 1e3)  # its HBM gather, at the new rate
    raised_pcie = raise_ceiling(doc, "h2d_pinned_Bps", 100e9, "p", "r")  # the cache's floor stays its HBM gather's
    assert raised_pcie["results"][2]["timings"][END_TO_END]["floor_ms"] == pytest.approx(0.08)
    assert raised_pcie["results"][1]["timings"][END_TO_END]["floor_ms"] == pytest.approx(120e6 / 100e9 * 1e3)


def test_a_raise_is_refused_when_it_is_none_or_a_floor_is_still_beaten():
    doc = _doc()
    with pytest.raises(UsageError, match="not above this run's 3000.0 GB/s"):
        raise_ceiling(doc, "d2d_Bps", 3e12, "p", "r")
    with pytest.raises(UsageError, match="say where"):
        raise_ceiling(doc, "d2d_Bps", 4e12, " ", "r")
    with pytest.raises(UsageError, match="raise in one part, then merge"):
        raise_ceiling(dict(doc, parts=[]), "d2d_Bps", 4e12, "p", "r")
    doc["results"][0]["timings"][GPU_SAMPLE].update(median_ms=0.05)  # beats 240 MB at 4 TB/s (0.06 ms)
    with pytest.raises(UsageError, match=r"still beat their floors: gpu-fused 8 gpu_sample_wall x0.833"):
        raise_ceiling(doc, "d2d_Bps", 4e12, "p", "r")


def test_the_raise_script_takes_the_value_from_the_same_machines_other_part_only(tmp_path):
    run, other, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "new.json"
    run.write_text(json.dumps(dict(_doc(), schema_version=1, machine={"name": "m"})))
    part_b = dict(_doc(), schema_version=1, machine={"name": "m"}, created_at="T")
    part_b["ceilings"] = dict(part_b["ceilings"], d2d_Bps=4e12)
    other.write_text(json.dumps(part_b))
    script = [sys.executable, str(ROOT / "scripts" / "raise_replay_ceiling.py"), str(run), "--ceiling", "d2d_Bps",
              "--from", str(other), "--reason", "best of the sweep", "--out", str(out)]
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert json.loads(out.read_text())["raised_ceilings"]["d2d_Bps"]["from"] == "b.json (T)"
    again = subprocess.run(script, capture_output=True, text=True)
    assert again.returncode == 2  # the output exists: not overwritten
    out.unlink()
    other.write_text(json.dumps(dict(part_b, machine={"name": "elsewhere"})))
    proc = subprocess.run(script, capture_output=True, text=True)
    assert proc.returncode == 2 and "same machine" in proc.stderr and not out.exists()


def test_a_raise_from_another_part_needs_its_machine_and_its_ceiling():
    from rlperf.report.replay_withdraw import raise_ceiling_from

    doc = dict(_doc(), machine={"name": "m"})
    other = dict(_doc(), machine={"name": "m"}, created_at="T", ceilings={"d2d_Bps": 4e12})
    out = raise_ceiling_from(doc, other, "d2d_Bps", "b.json", "best of the sweep")
    assert out["raised_ceilings"]["d2d_Bps"]["from"] == "b.json (T)" and out["ceilings"]["d2d_Bps"] == 4e12
    with pytest.raises(UsageError, match="b.json measured no h2d_pinned_Bps"):
        raise_ceiling_from(doc, other, "h2d_pinned_Bps", "b.json", "r")
    with pytest.raises(UsageError, match="measured on 'elsewhere', this run on 'm'"):
        raise_ceiling_from(doc, dict(other, machine={"name": "elsewhere"}), "d2d_Bps", "b.json", "r")
