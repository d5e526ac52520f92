"""Floors are floors: no committed replay result may sit below its floor (x floor < 0.95; the margin is
for noise), and a superseded report shows no floor in results/SUMMARY.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlperf.report import summary

RESULTS = Path(__file__).resolve().parents[1] / "results"
MARGIN = 0.95
REPORTS = sorted(RESULTS.glob(summary.REPLAY_GLOB))


def below_floor(doc: dict, margin: float = MARGIN) -> list[str]:
    """'placement capacity metric: x floor' for every timing under `margin` times its floor."""
    return [f"{r['placement']} {r['capacity_rows']} {metric}: {t['x_floor']:.2f}"
            for r in doc["results"] for metric, t in r["timings"].items()
            if t.get("x_floor") is not None and t["x_floor"] < margin]


def test_the_check_flags_a_timing_below_its_floor():
    doc = {"results": [{"placement": "host", "capacity_rows": 4096,
                        "timings": {"cpu_sample_wall": {"x_floor": 0.76}, "cpu_sample_h2d_wall": {"x_floor": 1.2}}}]}
    assert below_floor(doc) == ["host 4096 cpu_sample_wall: 0.76"]


def test_there_are_committed_replay_reports():
    assert REPORTS, f"no {summary.REPLAY_GLOB} under results/"


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.name)
def test_no_current_result_beats_its_floor(path):
    if summary.superseded_note(path.parent):
        pytest.skip(f"superseded ({path.parent / summary.SUPERSEDED}); its floors are not shown anywhere")
    assert not below_floor(json.loads(path.read_text())), path


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.name)
def test_the_summary_shows_no_floor_for_a_superseded_report(path, capsys):
    assert summary.main(["--results", str(RESULTS)]) == 0
    text = capsys.readouterr().out
    section = text.split(f"### {json.loads(path.read_text())['machine']['name']}\n", 1)[1].split("\n### ", 1)[0]
    if summary.superseded_note(path.parent):
        assert "**Superseded**" in section and "| x floor |" not in section
    else:
        assert "| x floor |" in section and "**Superseded**" not in section
