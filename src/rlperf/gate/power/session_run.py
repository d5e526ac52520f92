"""One gate session's subprocess, run so that a cut leaves its progress on disk.

Why: a session is one `rlperf gate --run` of many minutes. Captured in a pipe (subprocess.run with
capture_output), its output died with it when the device step's limit interrupted the study on the H200
host (2026-12-04, results/reports/gate/nvidia-h200x1-16vcpu-intel-xeon/power-paired/
six-gathers-attempts-2026-12-04/PROVENANCE.md): an empty session folder, no clue how far it got. Here the
child writes straight into the session's log file, unbuffered (PYTHONUNBUFFERED), so every line it
printed is on disk whatever happens next; an interrupt (SIGINT, or SIGTERM as `timeout` sends by default)
or the study's deadline stops the child's whole process group (the gate, asv, the paired workers) and
raises SessionCut, which names the session and how long it ran. A cut session is never a verdict:
SessionCut is an InfrastructureError (exit 5).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager

from rlperf.errors import InfrastructureError

GRACE_S = 10.0  # a stopped child's time to clean up (worktrees, workers) after SIGINT, before SIGKILL


class SessionCut(InfrastructureError):
    """A session stopped before its gate run ended: interrupted, or past the study's deadline."""

    def __init__(self, message: str, record: dict):
        super().__init__(message)
        self.record = record


class _Interrupted(Exception):
    """SIGINT or SIGTERM, raised in the main thread while a session runs."""


CUT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_raise():
    """SIGINT and SIGTERM raise _Interrupted while the session runs (only the main thread may set a handler).
    SIGINT gets its handler too, not only Python's default: a shell starts a background job (`... &`) with SIGINT
    ignored, and Python then installs none, so `timeout -s INT` would not cut the session (a fresh-clone
    `.ci/run` started in the background failed the interrupt test that way, 2026-12-05)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Interrupted()

    previous = {sig: signal.signal(sig, handler) for sig in CUT_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _stop(proc: subprocess.Popen) -> None:
    """SIGINT to the child's process group (it started one of its own), SIGKILL after GRACE_S; the group
    is killed in any case, so no worker of it outlives the session."""
    for sig, wait in ((signal.SIGINT, GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGINT:  # exited: still clear the group of anything it left behind
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return


def run_logged(cmd: list[str], cwd: str, log_path: str, timeout_s: float | None = None) -> tuple[int, float]:
    """Run `cmd`, its stdout and stderr written line by line into `log_path` as it runs; (exit code,
    seconds). Interrupted (SIGINT/SIGTERM) or past `timeout_s`: the child is stopped and SessionCut raised,
    its record {"cut": "interrupted"|"deadline", "seconds", "exit_code" (the stopped child's), "log"}."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    with open(log_path, "w", buffering=1) as log:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            with _signals_raise():
                code = proc.wait(timeout=timeout_s)
            return code, time.perf_counter() - start
        except subprocess.TimeoutExpired:
            cut = "deadline"
        except (KeyboardInterrupt, _Interrupted):
            cut = "interrupted"
        _stop(proc)
    seconds = time.perf_counter() - start
    record = {"cut": cut, "seconds": seconds, "exit_code": proc.returncode, "log": log_path}
    why = f"past the deadline ({timeout_s:.0f} s left for it)" if cut == "deadline" else "interrupted"
    raise SessionCut(f"the gate session was {why} after {seconds:.0f} s; its output so far: {log_path}", record)


__all__ = ["GRACE_S", "SessionCut", "run_logged"]
