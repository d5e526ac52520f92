"""`rlperf bench`: what `make bench` runs: asv on this checkout's HEAD, the site, and a summary.

    rlperf bench                        # the default points (a few per benchmark class), --quick
    rlperf bench --bench REGEX          # only the default points matching an asv --bench regex
    rlperf bench --full [--bench RE]    # every point, full statistics with samples (what the gate compares)
    rlperf bench --record               # store into results/asv/<machine>/ (refused for another host's
                                        # committed folder) instead of the git-ignored .asv/results/

Exit 0 when no point failed, 2 on bad input (nothing run) or when a point failed, or asv's/publish's
status when they fail otherwise. Points that need CUDA are not run on a host without a GPU (one line per
benchmark); every point asv runs is announced as it starts, with a heartbeat every 30 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from rlperf.errors import UsageError


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--full", action="store_true", help="every point with full statistics (no --quick)")
    p.add_argument("--bench", help="asv --bench regex narrowing the points (matched against name(params))")
    p.add_argument("--record", action="store_true", help="store into results/asv/ instead of .asv/results/")
    p.add_argument("--machine", help="machine name (default: `rlperf machine --print-name`)")
    return p


def _git_head(repo: str) -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    if out.returncode != 0:
        raise UsageError(f"{repo} is not a git checkout with a commit (asv stores results per commit)")
    return out.stdout.strip()


def _write_conf(repo: str, target, sha: str, path: str) -> str:
    """asv.conf.json with absolute folders and the chosen results/html dirs (asv has no --results-dir);
    `branches` is HEAD itself, as in the gate: a checkout may lack a local main, or main may be elsewhere."""
    import json

    from rlperf.asvtools.conf import CONF_NAME, load_conf

    conf = load_conf(os.path.join(repo, CONF_NAME))
    conf.update(repo=repo, branches=[sha],
                benchmark_dir=os.path.join(repo, conf.get("benchmark_dir", "benchmarks")),
                env_dir=os.path.join(repo, conf.get("env_dir", ".asv/env")),
                results_dir=os.path.join(repo, target.results_dir), html_dir=os.path.join(repo, target.html_dir))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(conf, fh, indent=2)
    return path


def run(args) -> int:
    from rlperf.asvtools import bench_plan, progress, results_target, run_summary
    from rlperf.asvtools.machine_file import write_machine_file
    from rlperf.measure.machine import machine_name

    repo = os.getcwd()
    started = time.monotonic()
    machine = args.machine or machine_name()
    if not machine.strip():
        raise UsageError("--machine must not be empty")
    if not os.path.isfile(os.path.join(repo, "benchmarks", "__init__.py")):
        raise UsageError(f"{repo}/benchmarks/__init__.py is missing: run from the repository root")
    print(f"bench: planning the run of {repo}/benchmarks (asv discovery) ...", flush=True)
    target = results_target.choose(repo, machine, args.record)  # refuses before anything is measured
    sha = _git_head(repo)
    plan = bench_plan.make_plan(bench_plan.discover(os.path.join(repo, "benchmarks")), full=args.full,
                                bench=args.bench, cuda=bench_plan.cuda_visible())

    entry, machine_file = write_machine_file(name=machine)
    say = print
    say(f"bench: machine {machine} ({entry['cpu']}, {entry['num_cpu']} cpus, gpu {entry['gpu']}), asv entry in "
        f"{machine_file}")
    say(f"bench: results into {target.describe(machine)}")
    chosen = "every point" if args.full else "the default points (make bench-full for every point)"
    say(f"bench: {len(plan.run)} points to run of {plan.total_points}: {chosen}"
        + (f", matching {args.bench!r}" if args.bench else "") + ("" if args.full else "; --quick"))
    for line in bench_plan.describe_not_run(plan):
        say(f"bench: not run here: {line}")

    log_path = os.path.join(repo, ".asv", "bench.log")
    conf = _write_conf(repo, target, sha, os.path.join(repo, ".asv", "bench.conf.json"))
    with open(log_path, "w"):
        pass
    status, gap = 0, 0.0
    if plan.run:
        cmd = [sys.executable, "-m", "asv", "run", "--config", conf, "--python=same", "--launch-method", "spawn",
               "--show-stderr", "--set-commit-hash", sha, "--machine", machine]
        cmd += ["--record-samples"] if args.full else ["--quick"]
        for regex in plan.regexes():
            cmd += ["--bench", regex]
        status, gap = progress.run_asv(cmd, plan, log_path, cwd=repo)
    say("bench: asv publish (the site) ...")
    publish = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", conf], cwd=repo,
                             capture_output=True, text=True)
    if publish.returncode == 0:  # as `make publish`: rlperf's readable default view of each graph page
        publish = subprocess.run([sys.executable, "-m", "rlperf", "site", "defaults",
                                  os.path.join(repo, target.html_dir)], cwd=repo, capture_output=True, text=True)
    with open(log_path, "a") as log:
        log.write(publish.stdout + publish.stderr)

    with open(log_path) as fh:
        log_text = fh.read()
    values = run_summary.stored_values(run_summary.result_file(os.path.join(repo, target.results_dir), machine, sha))
    summary = run_summary.summarize(plan, values, log_text)
    result = run_summary.result_file(target.results_dir, machine, sha) or f"{target.results_dir}/{machine}/ (none)"
    site = (os.path.join(target.html_dir, "index.html") + "   (make preview; make site-check)"
            if publish.returncode == 0 else f"asv publish or rlperf site defaults failed (exit {publish.returncode}); see the log")
    for line in run_summary.format_summary(summary, results=f"{result}" + (" (local, git-ignored)" if target.local
                                                                           else ""),
                                           site=site, log=os.path.relpath(log_path, repo),
                                           wall_s=time.monotonic() - started):
        say(line)
    say(f"longest silence on the console while asv ran: {gap:.0f} s")
    if summary.failed:
        return 2
    if status != 0:
        say(f"bench: asv exited {status} although no planned point failed; see the log")
        return status
    return publish.returncode


__all__ = ["add_parser", "run"]
