"""Floors are floors: no committed replay or env result may sit below its floor (x floor < 0.95; the margin
is for noise), and a superseded report shows no floor in results/SUMMARY.md. Env results measured with the
old fixed 256 MiB ceiling are accepted below it only where their machine folder says why (FLOORS.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlperf.report import summary

RESULTS = Path(__file__).resolve().parents[2] / "results"
MARGIN = 0.95
REPORTS = sorted(RESULTS.glob(summary.REPLAY_GLOB))
ENV_REPORTS = sorted(RESULTS.glob(summary.ENV_GLOB))
OLD_CEILING_BYTES = 256 * 2**20


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
    text = summary.summary_text(RESULTS)
    section = text.split(f"### {json.loads(path.read_text())['machine']['name']}\n", 1)[1].split("\n### ", 1)[0]
    section = " ".join(section.split())  # table cells are padded: compare them space-collapsed
    if summary.superseded_note(path.parent):
        assert "**Superseded**" in section and "| x floor |" not in section
    else:
        assert "| x floor |" in section and "**Superseded**" not in section


def env_below_floor(doc: dict, margin: float = MARGIN) -> list[tuple[str, bool]]:
    """('envs threads: x floor', ceiling had the kernel's footprint) for every case under `margin`."""
    from rlperf.envs.copy_rate import copy_bytes_for

    out = []
    for r in doc["results"]:
        x = r.get("x_memory_floor")
        if x is not None and x < margin:
            matched = (r.get("host_copy") or {}).get("buffer_bytes") == copy_bytes_for(r["bytes_touched"])
            out.append((f"{r['num_envs']} envs {r['threads']} threads: {x:.2f}", matched))
    return out


def test_the_env_check_tells_a_footprint_ceiling_from_the_old_one():
    from rlperf.envs.copy_rate import copy_bytes_for

    touched = 1670 * 32768
    doc = {"results": [
        {"num_envs": 32768, "threads": 16, "x_memory_floor": 0.8, "bytes_touched": touched,
         "host_copy": {"buffer_bytes": OLD_CEILING_BYTES}},
        {"num_envs": 32768, "threads": 8, "x_memory_floor": 0.9, "bytes_touched": touched,
         "host_copy": {"buffer_bytes": copy_bytes_for(touched)}},
        {"num_envs": 512, "threads": 1, "x_memory_floor": 2.0, "bytes_touched": 1670 * 512,
         "host_copy": {"buffer_bytes": copy_bytes_for(1670 * 512)}}]}
    assert env_below_floor(doc) == [("32768 envs 16 threads: 0.80", False), ("32768 envs 8 threads: 0.90", True)]


@pytest.mark.parametrize("path", ENV_REPORTS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_no_env_result_beats_its_floor(path):
    below = env_below_floor(json.loads(path.read_text()))
    assert not [case for case, matched in below if matched], path  # a footprint ceiling is never beaten
    if below:
        assert (path.parent.parent / "FLOORS.md").is_file(), (path, below)
