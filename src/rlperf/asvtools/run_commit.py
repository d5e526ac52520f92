"""Benchmark one commit with a prepared Python: worktree -> install without deps -> asv --python=same.

The commit's package is installed into an overlay folder (`pip install --no-deps --no-build-isolation
--target`) and put first on the benchmark processes' path through ASV_PYTHONPATH (asv drops plain
PYTHONPATH). This builds the commit like a real install would, yet never touches the environment's
site-packages: a shared GPU runner's Python keeps its own rlperf and CUDA torch after the gate.
"""

from __future__ import annotations

import collections
import contextlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from asv.machine import MachineCollection

from rlperf.asvtools import git, store
from rlperf.asvtools.conf import write_run_conf
from rlperf.asvtools.fingerprint import fingerprint
from rlperf.asvtools.machine_file import machine_entry, machine_file_path, write_machine_file
from rlperf.asvtools.stored import has_results
from rlperf.errors import InfrastructureError, SuiteImportError

# what asv prints (asv/benchmarks.py) when discovery fails: the commit's suite does not import
IMPORT_FAILURE = "Failed to build the project and import the benchmark suite"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
    """Write this host's entry under `name` unless asv's machine file already holds exactly it.

    Why rewrite a stale entry: asv copies the entry into every result's params, and a runner whose
    home survives a re-image or a move to another CPU would otherwise stamp the new host's results
    with the old host's facts, which keeps one series across a host change (docs/gate.md)."""
    try:
        stored = MachineCollection.load(name)
    except Exception:  # asv raises UserError for an unknown name and ValueError for a bad file
        stored = None
    if stored == machine_entry(name=name):
        return
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


@dataclass(frozen=True)
class PreparedCommit:
    """A commit checked out in its own worktree with its package built into an overlay folder."""

    sha: str
    worktree: str
    env: dict  # the benchmark processes' environment (ASV_PYTHONPATH starts with the overlay)


@contextlib.contextmanager
def prepared_commit(repo: str, sha: str, echo=None):
    """Worktree + overlay install of `sha`, kept for as many asv runs as the caller makes."""
    echo = echo or _stderr
    with git.worktree(repo, sha) as wt, tempfile.TemporaryDirectory(prefix="rlperf-overlay-") as overlay:
        echo(f"rlperf gate: preparing {sha[:12]} in worktree {wt}")
        yield _installed(sha, wt, overlay, echo)


def _installed(sha: str, wt: str, overlay: str, echo) -> PreparedCommit:
    install_overlay(wt, overlay, echo)
    env = dict(os.environ)
    env["ASV_PYTHONPATH"] = os.pathsep.join(p for p in (overlay, env.get("ASV_PYTHONPATH")) if p)
    return PreparedCommit(sha=sha, worktree=wt, env=env)


@contextlib.contextmanager
def prepared_working_tree(repo: str, sha: str, echo=None):
    """prepared_commit of `sha` (the checked-out commit) with the repository's uncommitted changes
    copied over its worktree before the install: `--allow-dirty` measures what is on disk. Its results
    carry `sha` without being that commit's, so the caller must not store them (gate.flow)."""
    echo = echo or _stderr
    if git.resolve(repo, "HEAD") != sha:
        raise InfrastructureError(f"the working tree of {repo} is not at {sha[:12]}: only the checked-out commit "
                                  "can be measured with its uncommitted changes")
    with git.worktree(repo, sha) as wt, tempfile.TemporaryDirectory(prefix="rlperf-overlay-") as overlay:
        changed = git.uncommitted_paths(repo)
        git.overlay_uncommitted(repo, wt, changed)
        echo(f"rlperf gate: preparing the working tree of {sha[:12]} ({len(changed)} uncommitted path(s)) in {wt}")
        yield _installed(sha, wt, overlay, echo)


def run_prepared(commit: PreparedCommit, *, machine: str, results_dir: str, fallback_conf: str,
                 bench: str | None = None, quick: bool = False, echo=None, suite_dir: str | None = None) -> int:
    """One `asv run` of a prepared commit into `results_dir`; returns asv's exit status (2: some failed).

    Raises SuiteImportError when asv could not import the commit's suite, InfrastructureError when
    nothing was stored for another reason.
    """
    echo = echo or _stderr
    ensure_machine(machine)
    echo(f"rlperf gate: benchmarking {commit.sha[:12]} into {results_dir}")
    conf = write_run_conf(commit.worktree, fallback_conf, results_dir, commit.sha, benchmark_dir=suite_dir)
    status, tail = _stream(asv_run_command(conf, commit.sha, machine, bench=bench, quick=quick), commit.env,
                           commit.worktree, echo)
    if not has_results(results_dir, machine, commit.sha):
        if IMPORT_FAILURE in tail:
            raise SuiteImportError(f"the benchmark suite of {commit.sha[:12]} does not import "
                                   f"(asv exit {status}):\n{tail}", commit.sha)
        raise InfrastructureError(f"asv stored no results for {commit.sha[:12]} on {machine} "
                                  f"(asv exit {status}):\n{tail}")
    return status


def run_into_store(commit: PreparedCommit, *, machine: str, results_dir: str, fallback_conf: str,
                   bench: str | None = None, quick: bool = False, echo=None,
                   wait_s: float = store.DEFAULT_WAIT_S, suite_dir: str | None = None) -> int:
    """One asv run of a prepared commit in a scratch folder, merged into `results_dir` with the session's
    host fingerprint (asvtools.store); returns asv's exit status. `suite_dir`: run that suite instead of the
    commit's own (the history's model); its discovery then describes a partial suite, so the stored
    benchmarks.json (the full suite's) is kept as it is.

    Why not straight into `results_dir`: asv rewrites the commit's file in place, unlocked and not
    atomically (asv.util.write_json), so two runs on one folder lose each other's points and a killed
    run leaves half a file; it also replaces benchmarks.json with the commit's own suite."""
    session = fingerprint()
    with tempfile.TemporaryDirectory(prefix="rlperf-run-") as folder:
        scratch = os.path.join(folder, "results")  # asv's html_dir lands beside it (asvtools.conf)
        status = run_prepared(commit, machine=machine, results_dir=scratch, fallback_conf=fallback_conf,
                              bench=bench, quick=quick, echo=echo, suite_dir=suite_dir)
        store.publish(results_dir, machine, scratch, [commit.sha], bench=bench, fingerprint=session,
                      wait_s=wait_s, echo=echo, metas=None if suite_dir is None else [])
    return status


def run_commit(repo: str, sha: str, *, machine: str, results_dir: str, fallback_conf: str,
               bench: str | None = None, quick: bool = False, echo=None, wait_s: float = store.DEFAULT_WAIT_S) -> int:
    """Benchmark `sha` and merge its results into `results_dir` (run_into_store); returns asv's exit status."""
    with prepared_commit(repo, sha, echo) as commit:
        return run_into_store(commit, machine=machine, results_dir=results_dir, fallback_conf=fallback_conf,
                              bench=bench, quick=quick, echo=echo, wait_s=wait_s)


__all__ = ["IMPORT_FAILURE", "PreparedCommit", "asv_run_command", "ensure_machine", "install_overlay",
           "prepared_commit", "prepared_working_tree", "run_commit", "run_into_store", "run_prepared"]
