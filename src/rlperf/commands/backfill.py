"""`rlperf backfill`: measure the history selection over past commits with one suite (asv's model).

    rlperf backfill --machine NAME                    # last 40 first-parent commits of main + every one
                                                      # that changed src/rlperf/envs or src/rlperf/replay
    rlperf backfill --machine NAME --commits A..B     # or SHA,SHA,...
    rlperf backfill --machine NAME --dry-run          # the commits, points and suite, nothing measured
    rlperf backfill --machine NAME --report           # the log as Markdown (time per commit, load, skips)
    rlperf backfill --machine NAME --selection gpu-history --bench '^bench_replay'   # a part of the selection
    taskset -c 1 rlperf backfill ... --max-minutes 100   # what the committed CPU history ran (docs/history.md)

Every commit is checked out in its own worktree, its package installed into an overlay, and the suite of
`--suite` (default HEAD, snapshotted once) runs the selection's points against it; a suite module that
cannot import the commit's code is left out of that commit with the reason. Results merge into
`--results-dir` under its lock, with the host fingerprint; commits already stored are skipped, so a run
cut short resumes. One JSON line per commit (time, load average, left-out modules) goes to `--log`.
Refused (exit 5, before measuring) when this host is not the one the machine's history was measured on.
Exit 0 when every commit was stored, 2 on bad input, 3 when a commit's points failed, 5 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from rlperf.errors import UsageError

ORDERS = ("changes-first", "newest-first", "oldest-first")
DEFAULT_PATHS = ("src/rlperf/envs", "src/rlperf/replay")


def add_parser(subparsers, name: str, help_text: str):
    from rlperf.asvtools.bench_plan import SELECTIONS

    p = subparsers.add_parser(name, help=help_text, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machine", required=True, help="asv machine name of the series (one host per name)")
    p.add_argument("--commits", default="history",
                   help="'history' (--last commits of --branch plus those that changed --paths), A..B, or SHA,SHA")
    p.add_argument("--branch", default="main", help="branch whose first-parent commits 'history' walks")
    p.add_argument("--last", type=int, default=40, help="how many of the newest first-parent commits 'history' takes")
    p.add_argument("--paths", default=",".join(DEFAULT_PATHS),
                   help="comma-separated paths: 'history' adds every first-parent commit that changed one")
    p.add_argument("--suite", default="HEAD", help="the commit whose benchmarks/ runs over every commit")
    p.add_argument("--selection", default="history", choices=sorted(SELECTIONS),
                   help="the points (rlperf.asvtools.bench_plan)")
    p.add_argument("--bench", default=None,
                   help="asv regex narrowing the selection's points (e.g. when a device call cannot fit them all)")
    p.add_argument("--order", default="changes-first", choices=ORDERS,
                   help="changes-first: commits that changed --paths first (newest first), then the rest")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="start no new commit after this many minutes (default: no limit)")
    p.add_argument("--results-dir", default=None, help="default: asv.conf.json's results_dir")
    p.add_argument("--log", default=None,
                   help="JSON lines, one per commit (default: results/reports/history/MACHINE/backfill.jsonl)")
    p.add_argument("--allow-host-change", action="store_true",
                   help="append although this host differs from the one the machine's history was measured on")
    p.add_argument("--redo", action="store_true",
                   help="measure commits already stored too: the store replaces only the points this run measures "
                        "(with --bench, re-measure a part of the selection after a fix of how it is measured)")
    p.add_argument("--dry-run", action="store_true", help="print the commits and points, measure nothing")
    p.add_argument("--report", action="store_true",
                   help="print the log as Markdown (per commit: points, seconds, load, modules left out), measure nothing")
    return p


def _commits(repo: str, args) -> list[str]:
    from rlperf.asvtools import git, history_suite

    paths = [p for p in args.paths.split(",") if p]
    if args.commits == "history":
        if args.last < 0:
            raise UsageError(f"--last must be >= 0, got {args.last}")
        commits = history_suite.history_commits(repo, args.branch, args.last, paths)
    elif ".." in args.commits:
        commits = git.commits_in_range(repo, args.commits)[::-1]
    else:
        commits = [git.resolve(repo, c) for c in args.commits.split(",") if c.strip()]
    if not commits:
        raise UsageError(f"--commits {args.commits!r} names no commit")
    if args.order == "oldest-first":
        return commits[::-1]
    if args.order == "changes-first" and paths:
        touched = history_suite.changed_commits(repo, args.branch, paths)
        return [c for c in commits if c in touched] + [c for c in commits if c not in touched]
    return commits


def _load1() -> float:
    return round(os.getloadavg()[0], 2)


def run(args) -> int:
    from rlperf.asvtools import bench_plan, history_suite
    from rlperf.asvtools.conf import CONF_NAME, load_conf
    from rlperf.asvtools.stored import has_results
    from rlperf.errors import InfrastructureError
    from rlperf.gate.host import history_host_change
    from rlperf.measure.machine import check_machine_name

    repo = os.getcwd()
    check_machine_name(args.machine)
    if args.max_minutes is not None and not args.max_minutes > 0:
        raise UsageError(f"--max-minutes must be > 0, got {args.max_minutes}")
    conf_path = os.path.join(repo, CONF_NAME)
    if not os.path.isfile(conf_path):
        raise UsageError(f"{conf_path} is missing: run from the repository root")
    results_dir = args.results_dir or os.path.join(repo, load_conf(conf_path).get("results_dir", "results"))
    log_path = args.log or os.path.join(repo, "results", "reports", "history", args.machine, "backfill.jsonl")
    if os.path.isdir(log_path):
        raise UsageError(f"--log {log_path} is a directory; give a file path")
    if args.report:
        from rlperf.report.backfill_log import markdown, read_log

        print(markdown(read_log(log_path), args.machine), end="")
        return 0
    try:
        commits = _commits(repo, args)
    except InfrastructureError as exc:
        raise UsageError(str(exc)) from None
    started = time.monotonic()
    with history_suite.suite_snapshot(repo, args.suite) as (suite_sha, suite):
        plan = bench_plan.make_plan(bench_plan.discover(suite), points=bench_plan.SELECTIONS[args.selection],
                                    bench=args.bench, cuda=bench_plan.cuda_visible())
        todo = [c for c in commits if args.redo or not has_results(results_dir, args.machine, c)]
        narrowed = f", --bench {args.bench}" if args.bench else ""
        print(f"backfill: suite {suite_sha[:12]} ({args.selection}{narrowed}: {len(plan.run)} points, "
              f"{len(plan.not_run)} left out: {'; '.join(bench_plan.describe_not_run(plan)) or 'none'})", flush=True)
        print(f"backfill: {len(commits)} commits, {len(commits) - len(todo)} already stored, {len(todo)} to measure "
              f"into {results_dir}/{args.machine}/ (order {args.order})", flush=True)
        if args.dry_run:
            for sha in todo:
                print(f"  {sha[:12]} {history_suite.subject(repo, sha)}")
            return 0
        changed = history_host_change(results_dir, args.machine) if todo else []
        if changed and not args.allow_host_change:
            print(f"backfill: this host is not the one the history of {args.machine!r} was measured on: "
                  f"{'; '.join(changed)}. Use another --machine, or --allow-host-change.", flush=True)
            return 5
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        worst = 0
        for i, sha in enumerate(todo, 1):
            minutes = (time.monotonic() - started) / 60
            if args.max_minutes is not None and minutes >= args.max_minutes:
                print(f"backfill: --max-minutes {args.max_minutes:g} reached after {i - 1} commits; "
                      f"{len(todo) - i + 1} left (run again to resume)", flush=True)
                break
            record = _one_commit(repo, sha, suite, suite_sha, plan, args, results_dir, i, len(todo))
            with open(log_path, "a") as fh:
                fh.write(json.dumps(record) + "\n")
            worst = max(worst, record["exit"])
            print(f"backfill: [{i}/{len(todo)}] {sha[:12]} {record['outcome']} in {record['seconds']:.0f} s "
                  f"(load {record['load1_before']} -> {record['load1_after']}){_dropped(record)}", flush=True)
    print(f"backfill: done in {(time.monotonic() - started) / 60:.1f} min; log {log_path}", flush=True)
    return worst


def _dropped(record: dict) -> str:
    left = record.get("modules_left_out") or {}
    return f"; left out: {', '.join(left)}" if left else ""


def _one_commit(repo, sha, suite, suite_sha, plan, args, results_dir, i, n) -> dict:
    """Measure one commit; never raises for the commit's own failures (they go in the record)."""
    import tempfile

    from rlperf.asvtools import history_suite
    from rlperf.asvtools.bench_plan import Plan
    from rlperf.asvtools.run_commit import prepared_commit, run_into_store
    from rlperf.errors import InfrastructureError, SuiteImportError

    t0, load_before = time.monotonic(), _load1()
    record = {"sha": sha, "subject": history_suite.subject(repo, sha), "suite": suite_sha,
              "selection": args.selection, "bench": args.bench, "redo": args.redo, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "load1_before": load_before, "cpu_affinity": sorted(os.sched_getaffinity(0))}
    print(f"backfill: [{i}/{n}] {sha[:12]} {record['subject'][:70]}", flush=True)
    try:
        with prepared_commit(repo, sha, echo=_quiet) as commit, tempfile.TemporaryDirectory(prefix="rlperf-suite-") as tmp:
            overlay = commit.env["ASV_PYTHONPATH"].split(os.pathsep)[0]
            own_suite, dropped = history_suite.importable_suite(suite, overlay, tmp)
            record["modules_left_out"] = dropped
            kept = set(history_suite.suite_modules(own_suite))
            points = [p for p in plan.run if p.benchmark.split(".")[0] in kept]
            record["points"] = len(points)
            bench = "|".join(Plan(run=points).regexes())
            if not points:
                record.update(outcome="nothing importable", exit=3)
            else:
                status = run_into_store(commit, machine=args.machine, results_dir=results_dir,
                                        fallback_conf=os.path.join(repo, "asv.conf.json"), bench=bench,
                                        echo=_quiet, suite_dir=own_suite)
                record.update(outcome="stored" + (" (some points failed)" if status == 2 else ""),
                              exit=3 if status == 2 else 0)
    except SuiteImportError as exc:
        record.update(outcome=f"suite does not import: {str(exc).splitlines()[0]}", exit=3)
    except InfrastructureError as exc:
        record.update(outcome=f"infrastructure: {str(exc).splitlines()[0]}", exit=5)
    record.update(seconds=round(time.monotonic() - t0, 1), load1_after=_load1())
    return record


def _quiet(line: str) -> None:
    """asv's per-point lines only (the point name and its value), not pip's or git's chatter."""
    if line.lstrip().startswith("[") and ("%]" in line):
        print("    " + line.strip(), flush=True)
