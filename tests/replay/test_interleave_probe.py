"""The interleaved placement probe (replay.interleave_probe): every placement in every round in a rotating order,
ratios read inside each round, tables per process and over processes, and clear refusals before anything is built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlperf.errors import UsageError
from rlperf.replay import interleave_probe
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(capacity_exponent=13, sample_rows=64, threads=1, rounds=3, warmup=0, repeat=2)


def test_every_placement_runs_every_round_in_a_rotating_order_on_the_cpu():
    rec = interleave_probe.probe(["host"], against="reference-host", **SMALL)
    assert rec["placements"] == ["reference-host", "host"] and rec["metrics"] == [CPU_SAMPLE, END_TO_END]
    assert len(rec["timings"]) == 3 * 2 * 2 and all(len(t["samples_ms"]) == 2 for t in rec["timings"])
    firsts = [t["placement"] for t in rec["timings"] if t["position"] == 0 and t["metric"] == CPU_SAMPLE]
    assert firsts == ["reference-host", "host", "reference-host"]  # the order rotates by one a round
    ratios = interleave_probe.paired(rec)
    assert set(ratios) == {("host", CPU_SAMPLE), ("host", END_TO_END)} and all(len(v) == 3 for v in ratios.values())
    for name in rec["placements"]:  # each host table's backing is kept: its bytes are the table's own
        assert rec["tables"][name]["nbytes"] == 2**13 * 930 * 4 and rec["tables"][name]["rss_bytes"] > 0


def test_the_summary_puts_each_host_tables_huge_page_share_beside_its_ratios():
    rec = _rec([1.8], [2.0])
    rec["tables"] = {"reference-host": {"huge_share": 0.0}, "host": {"huge_share": 1.0}, "gpu-fused": None}
    text = interleave_probe.summarize([rec])
    assert "Host tables in 2 MiB pages (share of resident bytes): reference-host 0.00, host 1.00." in text
    assert "2 MiB pages" not in interleave_probe.summarize([_rec([1.8], [2.0])])  # older records: no line


def _rec(host_ms, ref_ms) -> dict:
    timings = [{"round": r, "placement": name, "metric": CPU_SAMPLE, "position": 0, "samples_ms": [ms, ms, 9.0 * ms]}
               for name, per_round in (("host", host_ms), ("reference-host", ref_ms)) for r, ms in enumerate(per_round)]
    return {"placements": ["reference-host", "host"], "against": "reference-host", "capacity_rows": 2**20,
            "threads": 16, "machine": "m", "rounds": len(host_ms), "warmup": 2, "repeat": 3, "load_before": [0.5],
            "timings": timings}


def test_ratios_are_read_inside_each_round_not_across_the_drift():
    # the host drifts 2x between rounds; host is 10 % faster in every round, which only a per-round ratio shows
    rec = _rec([1.8, 3.6, 1.8], [2.0, 4.0, 2.0])
    assert interleave_probe.paired(rec)[("host", CPU_SAMPLE)] == pytest.approx([0.9, 0.9, 0.9])
    text = interleave_probe.summarize([rec, _rec([2.2, 2.2, 2.2], [2.0, 2.0, 2.0])])
    assert "| host | cpu_sample_wall | 1.800 (1.800..3.600) | 0.900 (0.900..0.900) | 3 of 3 |" in text
    assert "### Over 2 processes" in text
    assert "| host | cpu_sample_wall | reference-host | 1.000 (0.900..1.100) | 1 of 2 |" in text


@pytest.mark.parametrize("placements, against, metrics, words", [
    (["host", "gpu-fuse"], "reference-host", None, ["'gpu-fuse'", "host-numba"]),
    (["host"], "sharded-global", None, ["'sharded-global'", "reference-host"]),  # a rank placement: not here
    (["reference-host"], "reference-host", None, ["nothing to compare"]),
    (["host", "gpu-fused"], "reference-host", None, ["share no metric", "gpu-fused reports gpu_sample_wall"]),
    (["host"], "reference-host", ["gpu_sample_wall"], ["'gpu_sample_wall'", "cpu_sample_wall"]),
])
def test_bad_input_names_the_problem_and_the_choices_before_anything_is_built(placements, against, metrics, words):
    with pytest.raises(UsageError) as e:
        interleave_probe.probe(placements, against=against, metrics=metrics, **SMALL)
    assert all(w in str(e.value) for w in words), str(e.value)


def _script(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "device" / "probe_interleaved.py"), *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_the_script_refuses_an_existing_record_and_a_bad_placement_with_exit_2(tmp_path):
    old = tmp_path / "inter-1.json"
    old.write_text("{}")
    kept = _script("--out", str(old))
    assert kept.returncode == 2 and "exists" in kept.stderr and old.read_text() == "{}"
    bad = _script("--out", str(tmp_path / "new.json"), "--placements", "hots")
    assert bad.returncode == 2 and "'hots'" in bad.stderr and not (tmp_path / "new.json").exists()


def test_a_placement_that_cannot_run_here_is_refused_before_anything_is_built():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is up here")
    with pytest.raises(UsageError, match="needs cupy|gathers on the GPU: no CUDA device"):
        interleave_probe.probe(["uva-bf16"], against="uva-fused-bf16", metrics=["cpu_sample_then_h2d_wall"], **SMALL)
