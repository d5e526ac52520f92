"""Per-commit table of a machine's asv history, for its PROVENANCE.md: when each commit was timed,
how long asv spent, and the box's load average then (from a `date-iso load1 load5 load15` log).

    python scripts/asv_history_table.py results/asv/cpu-2vcpu-amd-epyc --load-log load-2.log \
        --python py_opt_rlperf-venv_bin_python [--since 2026-12-02T03:00]

Every figure comes from the result files asv wrote (`started_at`, `duration`) and the load log.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import json
import os
import sys


def _utc(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


def load_log(path: str) -> list[tuple[dt.datetime, float]]:
    out = []
    with open(path) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                out.append((dt.datetime.fromisoformat(parts[0].replace("Z", "+00:00")), float(parts[1])))
    return sorted(out)


def rows(folder: str, python: str, since: dt.datetime | None):
    for name in sorted(os.listdir(folder)):
        if not (name.endswith(".json") and python in name) or name == "machine.json":
            continue
        with open(os.path.join(folder, name)) as fh:
            doc = json.load(fh)
        cols = doc["result_columns"]
        entries = [dict(zip(cols, r)) for r in doc["results"].values()]
        starts = [e["started_at"] for e in entries if e.get("started_at")]
        if not starts:
            continue
        start = _utc(min(starts))
        if since and start < since:
            continue
        seconds = sum(float(e["duration"]) for e in entries if e.get("duration") is not None)
        yield start, doc["commit_hash"][:8], seconds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--load-log", help="load log (relative paths are inside FOLDER)")
    p.add_argument("--python", default="", help="only result files whose name contains this")
    p.add_argument("--since", help="ISO time (UTC): only commits timed from then on")
    args = p.parse_args(argv)
    since = dt.datetime.fromisoformat(args.since).replace(tzinfo=dt.timezone.utc) if args.since else None
    log = []
    if args.load_log:
        log = load_log(args.load_log if os.path.isabs(args.load_log) else os.path.join(args.folder, args.load_log))
    times = [t for t, _ in log]
    print("| commit | timed at (UTC) | asv benchmark s | load average (1 min), nearest minute |")
    print("|---|---|---|---|")
    for start, sha, seconds in sorted(rows(args.folder, args.python, since)):
        i = bisect.bisect_left(times, start)
        near = min((j for j in (i - 1, i) if 0 <= j < len(log)), key=lambda j: abs(times[j] - start), default=None)
        load = f"{log[near][1]:.2f}" if near is not None and abs(times[near] - start) < dt.timedelta(minutes=2) else "n/a"
        print(f"| {sha} | {start:%Y-%m-%d %H:%M} | {seconds:.0f} | {load} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
