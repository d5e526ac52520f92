"""What one whole null gate run costs, computed from committed measurements, not guessed.

asv stores, per benchmark, the seconds its selected points took (`duration`, spawn, setup and timing
included) and each setup_cache's seconds (`durations`); the history selection ran on one host over many
commits, so a benchmark's seconds per point is the median over those commits of duration / points it
ran. One asv run outside the benchmarks (start-up, discovery) comes from the backfill log: a commit's
seconds minus the asv durations in its result file; that also holds a worktree and an install, which a
gate pays once per commit, so it bounds the per-run overhead from above. A paired point costs its
`paired_seconds` plus one start-up per worker pair, measured in committed paired.json files (wall time
less the seconds sampled, per pair of workers). One run under a profile is then

    2 commits x passes x (overhead + sum of the sample's points + their setup_caches)
    + paired points x (paired_seconds + paired_restarts x start-up)

and each point the confirming round re-samples adds one more paired round. Points of a benchmark the
history never ran are counted as unmeasured and left out of the sum (the output says how many).
"""

from __future__ import annotations

import glob
import json
import math
import os
import statistics
from dataclasses import dataclass, field

from rlperf.asvtools.bench_plan import Point
from rlperf.gate import paired


@dataclass
class History:
    """Seconds measured on one host: per point of each benchmark, per setup_cache, per asv run outside both."""

    machine: str
    commits: int = 0
    per_point_s: dict[str, float] = field(default_factory=dict)  # benchmark -> median seconds per point
    setup_cache_s: dict[str, float] = field(default_factory=dict)  # setup_cache key -> median seconds
    overhead_s: float | None = None  # per asv run outside the benchmarks (upper bound, see the module doc)
    overhead_n: int = 0


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _result_files(results_dir: str, machine: str) -> dict[str, dict]:
    """{sha: result document} of every asv result file of `machine`."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results_dir, machine, "*.json"))):
        try:
            with open(path) as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "results" in doc and "commit_hash" in doc:
            out[doc["commit_hash"]] = doc
    return out


def _benchmark_seconds(doc: dict) -> dict[str, tuple[float, int]]:
    """{benchmark: (duration, points it ran)} of one result file; a point ran unless its value is NaN
    (not selected, or skipped); null is a failure, which ran."""
    cols = doc.get("result_columns") or []
    out = {}
    for name, row in doc["results"].items():
        r = dict(zip(cols, row))
        values, duration = r.get("result"), r.get("duration")
        if not isinstance(values, list) or not isinstance(duration, (int, float)):
            continue
        ran = sum(not _is_nan(v) for v in values)
        if ran:
            out[name] = (float(duration), ran)
    return out


def _setup_caches(doc: dict) -> dict[str, float]:
    """{setup_cache key: seconds} of one result file (asv's `durations`, keys '<setup_cache KEY>')."""
    out = {}
    for key, value in (doc.get("durations") or {}).items():
        if key.startswith("<setup_cache ") and isinstance(value, (int, float)):
            out[key[len("<setup_cache "):-1]] = float(value)
    return out


def _backfill_lines(path: str) -> list[dict]:
    if not os.path.isfile(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def history_costs(results_dir: str, machine: str, backfill_log: str | None = None) -> History:
    """The seconds `machine`'s committed results record (and its backfill log, when given)."""
    docs = _result_files(results_dir, machine)
    history = History(machine=machine, commits=len(docs))
    per_point: dict[str, list[float]] = {}
    caches: dict[str, list[float]] = {}
    for doc in docs.values():
        for name, (seconds, ran) in _benchmark_seconds(doc).items():
            per_point.setdefault(name, []).append(seconds / ran)
        for key, seconds in _setup_caches(doc).items():
            caches.setdefault(key, []).append(seconds)
    history.per_point_s = {k: statistics.median(v) for k, v in per_point.items()}
    history.setup_cache_s = {k: statistics.median(v) for k, v in caches.items()}
    # a commit's last backfill line, when it measured the whole selection: its file holds that run's durations
    last = {}
    for line in _backfill_lines(backfill_log) if backfill_log else []:
        last[line.get("sha")] = line
    overheads = []
    for sha, line in last.items():
        doc = docs.get(sha)
        if doc is None or line.get("bench") or line.get("exit") != 0 or not str(line.get("outcome", "")).startswith("stored"):
            continue
        inside = sum(s for s, _ in _benchmark_seconds(doc).values()) + sum(
            float(v) for v in (doc.get("durations") or {}).values() if isinstance(v, (int, float)))
        overheads.append(float(line["seconds"]) - inside)
    if overheads:
        history.overhead_s, history.overhead_n = statistics.median(overheads), len(overheads)
    return history


def pair_startup(folder: str) -> tuple[float | None, int]:
    """Median seconds one pair of paired workers costs beyond its sampling (start-ups, set-up), from every
    paired.json under `folder`; and how many worker pairs that rests on."""
    per_pair, pairs = [], 0
    for path in sorted(glob.glob(os.path.join(folder, "**", "paired.json"), recursive=True)):
        spec, points, _ = paired.load(path)
        for p in points:
            if p.wall and p.segments:
                sampled = spec.seconds * (1 + p.confirm_rounds)
                per_pair.append((p.wall - sampled) / len(p.segments))
                pairs += len(p.segments)
    return (statistics.median(per_pair) if per_pair else None), pairs


@dataclass
class Estimate:
    """One null run's expected seconds and how they add up."""

    passes: int
    points: int  # sample points this box runs
    measured_points: int  # of those, with seconds in the history
    unmeasured: list[str]  # benchmarks of the sample the history never ran
    pass_s: float  # one commit's asv run over the sample (overhead included)
    paired_points: int
    paired_point_s: float | None  # one paired point: its seconds plus the worker pairs' start-ups
    total_s: float | None
    overhead_s: float | None
    startup_s: float | None

    def lines(self, history: History, startup_pairs: int, paired_seconds: float, restarts: int) -> list[str]:
        out = [f"expected wall time of one null run on the history's host ({history.machine}, "
               f"{history.commits} commits of results): "
               + (f"{self.total_s / 60:.0f} min" if self.total_s is not None else "not computable (see below)"),
               f"  asv: 2 commits x {self.passes} passes x {self.pass_s:.0f} s per asv run: {self.points} points "
               f"({self.measured_points} with a measured duration; per point the median over commits of its "
               "benchmark's asv duration / points it ran) and their setup_caches"
               + (f", plus {self.overhead_s:.0f} s outside the benchmarks (median of {history.overhead_n} backfilled "
                  "commits: seconds less asv durations; an upper bound, it holds a worktree and an install)"
                  if self.overhead_s is not None else " (no backfill log: the per-run overhead is not included)")]
        if self.paired_points:
            out.append(f"  paired: {self.paired_points} points x ({paired_seconds:g} s + {restarts} worker pairs x "
                       + (f"{self.startup_s:.1f} s start-up, median over {startup_pairs} committed worker pairs)"
                          if self.startup_s is not None else "an unmeasured start-up: no committed paired.json)")
                       + (f" = {self.paired_point_s:.0f} s each; a point the confirming round re-samples adds "
                          f"{self.paired_point_s:.0f} s more" if self.paired_point_s is not None else ""))
        if self.unmeasured:
            out.append(f"  not in the sum: {', '.join(self.unmeasured)} (never run in that history)")
        return out


def estimate(points: list[Point], history: History, *, passes: int, paired_names: set[str], paired_seconds: float,
             restarts: int, startup_s: float | None, setup_cache_keys: dict[str, str | None]) -> Estimate:
    """One null run over `points` (those this box runs) from `history`; `paired_names` are the points the
    profile pairs, `setup_cache_keys` each benchmark's asv setup_cache key (benchmarks.json)."""
    measured = [p for p in points if p.benchmark in history.per_point_s]
    unmeasured = sorted({p.benchmark for p in points} - set(history.per_point_s))
    keys = {setup_cache_keys.get(p.benchmark) for p in measured} - {None}
    pass_s = (sum(history.per_point_s[p.benchmark] for p in measured)
              + sum(history.setup_cache_s.get(k, 0.0) for k in keys) + (history.overhead_s or 0.0))
    n_paired = sum(p.name in paired_names for p in points)
    paired_point_s = None if startup_s is None else paired_seconds + restarts * startup_s
    total = 2 * passes * pass_s + (n_paired * paired_point_s if paired_point_s is not None else 0.0)
    return Estimate(passes=passes, points=len(points), measured_points=len(measured), unmeasured=unmeasured,
                    pass_s=pass_s, paired_points=n_paired, paired_point_s=paired_point_s,
                    total_s=None if (n_paired and paired_point_s is None) else total,
                    overhead_s=history.overhead_s, startup_s=startup_s)


__all__ = ["Estimate", "History", "estimate", "history_costs", "pair_startup"]
