"""`rlperf backfill --bench` narrows the selection's points (a device call that cannot fit them all), and a
regex that selects none of them is bad input (exit 2), before anything is measured."""

from __future__ import annotations

import pytest

from rlperf.cli import main

pytestmark = pytest.mark.slow  # asv's discovery of the suite snapshot: a few seconds


def _dry_run(tmp_path, monkeypatch, *extra):
    monkeypatch.setattr("rlperf.asvtools.bench_plan.cuda_visible", lambda: True)  # plan as on the GPU host
    return main(["backfill", "--machine", "test-box", "--commits", "HEAD", "--selection", "gpu-history",
                 "--results-dir", str(tmp_path / "asv"), "--log", str(tmp_path / "log.jsonl"), "--dry-run", *extra])


def test_bench_narrows_the_selection(tmp_path, monkeypatch, capsys):
    assert _dry_run(tmp_path, monkeypatch, "--bench", r"^bench_replay\.ReplayGpuSample") == 0
    out = capsys.readouterr().out
    assert "gpu-history, --bench ^bench_replay\\.ReplayGpuSample: 11 points" in out
    assert _dry_run(tmp_path, monkeypatch) == 0
    assert "gpu-history: 24 points" in capsys.readouterr().out
    assert not (tmp_path / "asv").exists() and not (tmp_path / "log.jsonl").exists()


def test_a_bench_outside_the_selection_is_bad_input(tmp_path, monkeypatch, capsys):
    assert _dry_run(tmp_path, monkeypatch, "--bench", r"^bench_env\.EnvFused") == 2
    assert "matches no point of the default selection" in capsys.readouterr().err
