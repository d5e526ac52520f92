"""A power study's gate session cut short keeps what it printed, says it was cut and never passes for a result;
a deadline that cannot hold one session is refused before anything runs. The gate is a fake here: a script
that prints, starts a grandchild (as the gate starts asv and paired workers) and sleeps."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from rlperf.cli import main as rlperf_main
from rlperf.gate.power import session_time, sessions
from rlperf.gate.power import study as _study  # noqa: F401 - imported first, so its own `gate_command`
# (the plan's) is the real one: a fake patched into `sessions` must not be bound there for later tests

ROOT = Path(__file__).resolve().parents[2]
NULL5_BENCH = ("ReplayGpuSample\\.track_ms\\(20, '(gpu-padded|gpu-fused-padded|gpu-bf16|gpu-fused-bf16|"
               "gpu-compact-fused)', 1\\)")

# print without flushing (a pipe or file would buffer it), start a grandchild, then `then`, then sleep
FAKE_GATE = """
import os, signal, subprocess, sys, time
print("fake gate: base pass 1 of 1")
print("fake gate: pairing point 1 of 5", file=sys.stderr)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(f"grandchild {child.pid}")
{then}
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _fake_gate(monkeypatch, then: str = "pass") -> None:
    script = FAKE_GATE.replace("{then}", then)
    monkeypatch.setattr(sessions, "gate_command",
                        lambda *a, **k: [sys.executable, "-c", script, "--passes", "1"])


def study(tmp_path, *extra: str) -> int:
    argv = ["gate-power", "study", "--repo", str(ROOT), "--null-only", "--blocks", "1", "--paired-seconds", "0.01",
            "--trials-per-block", "2", "--pair-startup-s", "0", "--work-dir", str(tmp_path / "work"),
            "--out-json", str(tmp_path / "power.json"), "--out-md", str(tmp_path / "power.md"), *extra]
    try:
        return rlperf_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _cut_session(tmp_path) -> tuple[dict, Path]:
    """power.json's cut record and the cut session's folder; the record is the work dir's too."""
    doc = json.loads((tmp_path / "power.json").read_text())
    assert doc["complete"] is False and "arms" not in doc and not (tmp_path / "power.md").exists()
    kept = json.loads((tmp_path / "work" / "sessions.json").read_text())
    assert kept["sessions"] == [] and kept["cut"] == doc["cut"]
    folder = Path(doc["cut"]["dir"])
    assert folder.name == "cut-block0-null" and not (tmp_path / "work" / "block0-null").exists()
    return doc["cut"], folder


def _grandchild_gone(log: str) -> bool:
    pid = int(next(line for line in log.splitlines() if line.startswith("grandchild")).split()[1])
    deadline = time.time() + 10
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_a_session_past_the_deadline_is_stopped_its_output_kept_and_the_study_exits_5(tmp_path, monkeypatch):
    _fake_gate(monkeypatch)
    start = time.perf_counter()
    assert study(tmp_path, "--deadline-min", "0.05") == 5  # 3 s: the fake gate sleeps 120
    assert time.perf_counter() - start < 60
    cut, folder = _cut_session(tmp_path)
    assert cut["cut"] == "deadline" and cut["arm"] == "null" and cut["block"] == 0 and 2 < cut["seconds"] < 30
    log = (folder / "gate.log").read_text()
    assert "fake gate: base pass 1 of 1" in log and "pairing point 1 of 5" in log  # stdout and stderr, unflushed
    marker = json.loads((folder / "session.json").read_text())
    assert marker["complete"] is False and marker["cut"] == "deadline" and marker["log"] == "gate.log"
    assert _grandchild_gone(log)  # the child's whole process group is stopped


@pytest.mark.parametrize("signal_name, sigint", [("SIGINT", "default"), ("SIGTERM", "default"), ("SIGINT", "ignored")])
def test_an_interrupted_session_keeps_its_output_and_an_incomplete_marker(tmp_path, monkeypatch, signal_name, sigint):
    """The fake gate interrupts the study itself once it has printed, as `timeout -s INT` would. `ignored`: the study
    inherited SIGINT ignored, as a shell starts a background job (`rlperf gate-power study ... &`), so Python installed
    no handler of its own; the session still takes SIGINT as a cut."""
    _fake_gate(monkeypatch, f"os.kill(os.getppid(), signal.{signal_name})")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN if sigint == "ignored" else signal.getsignal(signal.SIGINT))
    try:
        assert study(tmp_path) == 5
    finally:
        signal.signal(signal.SIGINT, previous)
    cut, folder = _cut_session(tmp_path)
    assert cut["cut"] == "interrupted" and cut["seconds"] < 60
    log = (folder / "gate.log").read_text()
    assert "fake gate: base pass 1 of 1" in log and "pairing point 1 of 5" in log
    assert json.loads((folder / "session.json").read_text())["complete"] is False
    assert _grandchild_gone(log)


def test_a_finished_session_is_marked_complete(tmp_path, monkeypatch):
    monkeypatch.setattr(sessions, "gate_command", lambda *a, **k: [
        sys.executable, "-c", "print('fake gate: done'); raise SystemExit(5)", "--passes", "1"])
    arm = {"arm": "null", "sha": "0" * 40}
    args = type("Args", (), {"paired_seconds": 0.01, "trials_per_block": 2, "restarts_per_trial": 1,
                             "passes_per_block": 1})()
    info = sessions.run_session(str(tmp_path), "base", arm, args, str(tmp_path / "s"))
    assert info["complete"] is True and info["exit_code"] == 5
    assert json.loads((tmp_path / "s" / "session.json").read_text())["complete"] is True
    assert (tmp_path / "s" / "gate.log").read_text() == "fake gate: done\n"


def test_a_deadline_that_cannot_hold_one_session_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sessions, "gate_command", lambda *a, **k: pytest.fail("a gate ran"))
    code = study(tmp_path, "--target", "gpu-fused", "--bench", NULL5_BENCH, "--trials-per-block", "60",
                 "--paired-seconds", "1.2", "--pair-startup-s", "6.4", "--deadline-min", "8.6")
    assert code == 2 and not list(tmp_path.iterdir())
    err = capsys.readouterr().err
    assert "--deadline-min 8.6 (516 s)" in err and "about 38.0 min" in err and "5 points" in err


def test_the_estimate_counts_a_fresh_worker_pair_per_trial_of_every_selected_point():
    assert session_time.selected_points(str(ROOT), NULL5_BENCH) == 5  # the committed metadata's points
    assert session_time.selected_points(str(ROOT / "no-such-folder"), NULL5_BENCH) is None
    est = session_time.SessionEstimate(points=5, trials=60, paired_seconds=1.2, restarts_per_trial=1, startup_s=6.4)
    assert est.per_point_s == pytest.approx(456.0) and est.total_s == pytest.approx(2280.0)
    one = session_time.SessionEstimate(points=None, trials=60, paired_seconds=1.2, restarts_per_trial=2, startup_s=6.4)
    assert one.total_s == pytest.approx(60 * (1.2 + 2 * 6.4))  # points unknown: one point's, the least
    session_time.check_deadline(est, 0)  # no deadline: nothing to refuse
    session_time.check_deadline(est, 38.1)
    with pytest.raises(Exception, match="cannot hold one session"):
        session_time.check_deadline(est, 37.9)


def test_a_resumed_run_moves_a_killed_sessions_folder_aside(tmp_path):
    (tmp_path / "block0-null").mkdir()
    (tmp_path / "cut-block0-null").mkdir()
    aside = sessions._set_aside(str(tmp_path / "block0-null"))
    assert aside == str(tmp_path / "cut-block0-null-1") and os.path.isdir(aside)
    assert not (tmp_path / "block0-null").exists()
