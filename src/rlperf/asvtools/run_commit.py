"""Benchmark one commit with a prepared Python: worktree -> install without deps -> asv --python=same.

The commit's package is installed into an overlay folder (`pip install --no-deps --no-build-isolation
--target`) and put first on the benchmark processes' path through ASV_PYTHONPATH (asv drops plain
PYTHONPATH). This builds the commit like a real install would, yet never touches the environment's
site-packages: a shared GPU runner's Python keeps its own rlperf and CUDA torch after the gate.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile

from asv.machine import MachineCollection

from rlperf.asvtools import git
from rlperf.asvtools.conf import write_run_conf
from rlperf.asvtools.machine_file import machine_file_path, write_machine_file
from rlperf.gate.exitcodes import InfrastructureError
from rlperf.gate.results import has_results


def _stream(cmd: list[str], env: dict, cwd: str, echo) -> tuple[int, str]:
    """Run `cmd`, echoing its output line by line; returns (exit status, last lines)."""
    tail: collections.deque[str] = collections.deque(maxlen=40)
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
    except OSError as exc:
        raise InfrastructureError(f"cannot start {cmd[0]}: {exc}") from exc
    for line in proc.stdout:
        tail.append(line.rstrip())
        echo(line.rstrip())
    return proc.wait(), "\n".join(tail)


def ensure_machine(name: str) -> None:
    """Write this machine's entry under `name` unless asv's machine file already has one."""
    try:
        MachineCollection.load(name)
    except Exception:  # asv raises UserError for an unknown name and ValueError for a bad file
        write_machine_file(name=name)
        if not os.path.isfile(machine_file_path()):
            raise InfrastructureError(f"could not write asv machine file {machine_file_path()}") from None


def install_overlay(worktree: str, target: str, echo) -> None:
    """Build and install the commit's package (no dependencies) into `target`."""
    if not any(os.path.isfile(os.path.join(worktree, f)) for f in ("pyproject.toml", "setup.py")):
        echo(f"rlperf gate: {worktree} has no package to install; benchmarks run against the environment")
        return
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
           "--no-warn-script-location", "--target", target, worktree]
    status, tail = _stream(cmd, dict(os.environ), worktree, echo)
    if status != 0:
        raise InfrastructureError(f"installing {worktree} failed (pip exit {status}):\n{tail}")


def asv_run_command(conf: str, sha: str, machine: str, *, bench: str | None = None,
                    quick: bool = False) -> list[str]:
    """The asv invocation for one commit in the current interpreter's environment."""
    cmd = [sys.executable, "-m", "asv", "run", "--config", conf, "--python=same", "--set-commit-hash", sha,
           "--machine", machine, "--launch-method", "spawn", "--record-samples", "--show-stderr"]
    if bench:
        cmd += ["--bench", bench]
    if quick:
        cmd += ["--quick"]
    return cmd


def run_commit(repo: str, sha: str, *, machine: str, results_dir: str, fallback_conf: str,
               bench: str | None = None, quick: bool = False, echo=None) -> int:
    """Benchmark `sha` into `results_dir`; returns asv's exit status (2: some benchmark failed).

    Raises InfrastructureError when nothing was stored for the commit.
    """
    echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    ensure_machine(machine)
    with git.worktree(repo, sha) as wt, tempfile.TemporaryDirectory(prefix="rlperf-overlay-") as overlay:
        echo(f"rlperf gate: benchmarking {sha[:12]} from worktree {wt}")
        install_overlay(wt, overlay, echo)
        conf = write_run_conf(wt, fallback_conf, results_dir, sha)
        env = dict(os.environ)
        env["ASV_PYTHONPATH"] = os.pathsep.join(p for p in (overlay, env.get("ASV_PYTHONPATH")) if p)
        status, tail = _stream(asv_run_command(conf, sha, machine, bench=bench, quick=quick), env, wt, echo)
    if not has_results(results_dir, machine, sha):
        raise InfrastructureError(f"asv stored no results for {sha[:12]} on {machine} (asv exit {status}):\n{tail}")
    return status


__all__ = ["asv_run_command", "ensure_machine", "install_overlay", "run_commit"]
