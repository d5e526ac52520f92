"""One whole null gate run, recorded: what a PR that changes nothing measurable meets in CI.

In a throw-away clone, the power study's null arm (injection.make_arms: a comment-only commit on top of
--base) is gated against --base by a real `rlperf gate --run --profile PROFILE` over the null-run sample
(null_sample), in a fresh interpreter and a scratch results folder, with the base's gate.toml. The record
(host fingerprint, load before and after, start and end, the command, the gate's verdict JSON) is appended to
the log folder (null_log) whatever the gate said: a flagged null run is the datum this study exists for.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from rlperf.asvtools.fingerprint import fingerprint
from rlperf.asvtools.git import resolve, toplevel
from rlperf.envs.threads import max_numba_threads
from rlperf.errors import InfrastructureError, UsageError
from rlperf.gate.config import load_config
from rlperf.gate.power import null_log, null_sample
from rlperf.gate.power.injection import clone_repo, make_arms


MIN_POINTS = 100  # the documented sample a null run should cover (issue 25, section 4)


def check(repo: str, base: str, log: str, profile: str, benchmarks_json: str | None,
          machine: str | None) -> tuple[str, str, str]:
    """Every input checked before anything is cloned or measured: (repository top level, base SHA, the
    suite metadata's path: `benchmarks_json`, else the repository's results/asv/benchmarks.json)."""
    from rlperf.measure.machine import check_machine_name

    null_log.check_folder(log)
    try:
        top = toplevel(repo)
        sha = resolve(top, base)
    except InfrastructureError as exc:
        raise UsageError(f"--repo {repo!r} --base {base!r}: {exc}") from None
    config = os.path.join(top, "gate.toml")
    load_config(config if os.path.isfile(config) else None, profile=profile)  # unknown profile: names the valid
    benchmarks_json = benchmarks_json or os.path.join(top, "results", "asv", "benchmarks.json")
    null_sample.load_benchmarks(benchmarks_json)
    if machine is not None:
        check_machine_name(machine)
    return top, sha, benchmarks_json


def gate_command(clone: str, base: str, head: str, *, profile: str, bench: str, machine: str | None,
                 results_dir: str, verdict: str) -> list[str]:
    """`rlperf gate --run` as the CI leg runs it (its profile, the base's gate.toml), over the sample."""
    config = os.path.join(clone, "gate.toml")
    return [sys.executable, "-m", "rlperf", "gate", "--repo", clone, "--base", base, "--head", head, "--run",
            "--profile", profile, *(["--config", config] if os.path.isfile(config) else []), "--bench", bench,
            *(["--machine", machine] if machine else []), "--results-dir", results_dir, "--out-json", verdict]


def run_gate(cmd: list[str], cwd: str) -> tuple[int, str]:
    """Run the gate in a fresh interpreter: (exit code, the last lines of its output). Its output streams to
    our stderr as it comes, so a night's log shows the run as it goes."""
    tail: collections.deque[str] = collections.deque(maxlen=40)
    with subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            sys.stderr.write(line)
            tail.append(line)
    return proc.returncode, "".join(tail)


def null_run(repo: str, base: str, log: str, *, profile: str = "xeon", machine: str | None = None,
             benchmarks_json: str | None = None, echo=print) -> tuple[str, dict]:
    """One whole null run, appended to `log`; returns (record path, record)."""
    top, base_sha, benchmarks_json = check(repo, base, log, profile, benchmarks_json, machine)
    benchmarks = null_sample.load_benchmarks(benchmarks_json)
    plan = null_sample.sample_plan(benchmarks)
    cores = max_numba_threads()  # the suite's own thread ceiling: a point above it skips itself
    points = sum(null_sample.counts(plan, benchmarks, cores).values())
    started, load_before = time.time(), os.getloadavg()
    host = fingerprint()
    clone = clone_repo(top)
    scratch = tempfile.mkdtemp(prefix="gate-nulls-")
    try:
        [arm], _ = make_arms(clone, base_sha, [], [1], dry_run=True)
        verdict_path = os.path.join(scratch, "verdict.json")
        cmd = gate_command(clone, base_sha, arm["sha"], profile=profile, bench=null_sample.bench_regex(plan),
                           machine=machine, results_dir=os.path.join(scratch, "results"), verdict=verdict_path)
        echo(f"rlperf gate-power nulls: gating the null commit {arm['sha'][:12]} against {base_sha[:12]} over "
             f"{points} sample points ({cores} usable cores), profile {profile}")
        if points < MIN_POINTS:
            echo(f"WARNING: {cores} usable core(s) run {points} of the sample's points, fewer than the {MIN_POINTS} "
                 "a null run should cover (issue 25): run it on more cores (not pinned to one)")
        code, tail = run_gate(cmd, clone)
        verdict = None
        if os.path.isfile(verdict_path):
            with open(verdict_path) as fh:
                verdict = json.load(fh)  # the gate's whole verdict JSON (rlperf.gate/1), kept as it wrote it
    finally:
        shutil.rmtree(clone, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    ended = time.time()
    record = {"started": started, "started_utc": _utc(started), "ended_utc": _utc(ended),
              "seconds": round(ended - started, 1), "load_before": list(load_before), "load_after": list(os.getloadavg()),
              "host": host, "cores": cores, "profile": profile, "machine": machine or (verdict or {}).get("machine"),
              "sample": null_sample.SAMPLE, "sample_points": points, "base": base_sha, "head": arm["sha"],
              "command": cmd[2:], "gate_exit": code, "verdict": verdict,
              "error": None if verdict else tail}
    return null_log.append(log, record), record


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


__all__ = ["check", "gate_command", "null_run", "run_gate"]
