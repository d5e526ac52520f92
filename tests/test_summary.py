"""results/SUMMARY.md is generated from result files, never typed: it must reflect what they hold."""

import json

from rlperf.cli import main
from rlperf.report import summary


def test_the_summary_lists_every_measured_replay_point_with_its_machine_and_command(tmp_path, capsys):
    out = tmp_path / "reports" / "replay" / "box" / "results.json"
    assert main(["replay", "--capacity-rows", "4096", "--placements", "host", "--gpu-counts", "1",
                 "--warmup", "0", "--repeat", "2", "--torch-threads", "1", "--no-ceilings", "--no-plots",
                 "--out-json", str(out)]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert summary.main(["--results", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    median = doc["results"][0]["timings"]["cpu_sample_wall"]["median_ms"]
    assert f"| host | 4,096 | CPU sample | {median:.3f} |" in text
    assert doc["machine"]["name"] in text and "rlperf replay" in text


def test_the_committed_summary_is_what_the_module_prints_from_the_committed_results(monkeypatch, capsys):
    """results/SUMMARY.md goes stale whenever results change without a regeneration: fail until it is
    regenerated with `python -m rlperf.report.summary > results/SUMMARY.md` (run from the repository root)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)  # the summary names files by the path it was given: `results/...`
    assert summary.main(["--results", "results"]) == 0
    printed = capsys.readouterr().out
    assert printed == (root / "results" / "SUMMARY.md").read_text(), \
        "results/SUMMARY.md is stale: python -m rlperf.report.summary > results/SUMMARY.md"
