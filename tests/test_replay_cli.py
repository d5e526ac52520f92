"""`rlperf replay` on a CPU machine: valid JSON + PNG, --plot-only, and exit code 2 on bad input."""

import json

import pytest

from rlperf.cli import main

SMALL = ["replay", "--capacity-rows", "4096,8192", "--placements", "host,gpu", "--gpu-counts", "1,2",
         "--warmup", "0", "--repeat", "2", "--torch-threads", "1", "--no-ceilings"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay")
    assert main([*SMALL, "--out-json", str(out / "results.json")]) == 0
    return out


def test_the_cli_writes_a_versioned_json_with_timings_and_skips(run_dir):
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["schema"] == "rlperf.replay" and doc["schema_version"] == 1
    assert doc["machine"]["num_cpu"] >= 1 and doc["workload"]["row_bytes"] == 3720
    host = [r for r in doc["results"] if r["placement"] == "host"]
    assert {r["capacity_rows"] for r in host} == {4096, 8192}
    timing = host[0]["timings"]["cpu_sample_wall"]
    assert len(timing["samples_ms"]) == 2 and timing["mean_ms"] > 0
    reasons = " ".join(s["reason"] for s in doc["skipped"])
    assert "needs 2 GPUs" in reasons


def test_the_cli_writes_the_chart_and_analysis(run_dir):
    png = run_dir / "sac_replay_sampling_component_breakdown.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| GPUs | Capacity rows |" in (run_dir / "analysis.md").read_text()


def test_plot_only_rebuilds_charts_from_a_saved_json(run_dir, tmp_path):
    assert main(["replay", "--plot-only", str(run_dir / "results.json"), "--plot-dir", str(tmp_path)]) == 0
    assert (tmp_path / "sac_replay_sampling_component_breakdown.png").exists()
    assert (tmp_path / "analysis.md").exists()


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"schema": "rlperf.env", "schema_version": 1}', "not an rlperf 'rlperf.replay' result"),
    ('{"schema": "rlperf.replay", "schema_version": 99}', "schema_version 99"),
    ('{"schema": "rlperf.replay", "schema_version": 1}', "missing key"),
])
def test_plot_only_rejects_malformed_or_foreign_json_with_exit_2(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["replay", "--plot-only", str(bad), "--plot-dir", str(tmp_path / "plots")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "plots").exists()


@pytest.mark.parametrize("flags, message", [
    (["--placements", "host,warp"], "unknown placement 'warp'"),
    (["--gpu-counts", "0"], "--gpu-counts"),
    (["--capacity-exponents", "20,x"], "--capacity-exponents"),
    (["--task", "g1_fly"], "unknown task"),
    (["--repeat", "0"], "--repeat"),
    (["--torch-threads", "-2"], "--torch-threads"),
])
def test_bad_flags_exit_2_and_write_nothing(tmp_path, capsys, flags, message):
    out = tmp_path / "r" / "results.json"
    assert main(["replay", *flags, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.parent.exists()
