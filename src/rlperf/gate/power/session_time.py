"""One paired block session's wall time, estimated before it runs, and the deadline that cannot hold it.

Why: on 2026-12-04 a `--paired-seconds 1.2 --trials-per-block 60` session of 5 GPU points was started
under a 540 s device limit (and `--deadline-min 8.6`, checked only between sessions); it needed about
40 minutes and was cut with nothing kept (results/reports/gate/nvidia-h200x1-16vcpu-intel-xeon/
power-paired/six-gathers-attempts-2026-12-04/PROVENANCE.md). A session of the block design runs, per
point, --trials-per-block x --restarts-per-trial fresh worker pairs (sessions.run_session passes
`--paired-restarts` so), each sampling its share of the point's seconds, so

    points x trials x (paired_seconds + restarts_per_trial x start-up of one worker pair)

plus, not estimated here, one asv pass per side and the worktrees (minutes on a cold Numba cache).
The start-up defaults to the H200 host's record (WORKER_PAIR_STARTUP_S); the points are those --bench
selects in the repository's asv metadata (results/asv/benchmarks.json), every one counted, whether or
not this host runs it. It is an estimate of the part that grows with the design, a lower bound of the
whole session: a deadline that cannot hold even that is refused before anything runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rlperf.asvtools.bench_plan import make_plan
from rlperf.errors import UsageError
from rlperf.gate.power.null_sample import load_benchmarks

# about 7.4 s per worker pair of 1 s of sampling on the H200 host, i.e. 6.4 s of start-up (torch, the CUDA
# context, the benchmark's setup): results/reports/gate/nvidia-h200x1-16vcpu-intel-xeon/power-paired/
# PROVENANCE.md, `gpu-fused-3-worker-pairs/` (30 pairs in 223-241 s of paired wall time per point)
WORKER_PAIR_STARTUP_S = 6.4


@dataclass(frozen=True)
class SessionEstimate:
    """The paired part of one block session: how it adds up."""

    points: int | None  # points --bench selects in the metadata; None when the metadata is not there
    trials: int
    paired_seconds: float
    restarts_per_trial: int
    startup_s: float

    @property
    def per_point_s(self) -> float:
        return self.trials * (self.paired_seconds + self.restarts_per_trial * self.startup_s)

    @property
    def total_s(self) -> float:
        """The whole paired part; one point's when the points are unknown (the least a session runs)."""
        return self.per_point_s * (self.points if self.points is not None else 1)

    def line(self) -> str:
        per = (f"{self.trials} trials x ({self.paired_seconds:g} s of pairs + {self.restarts_per_trial} worker "
               f"pair(s) x {self.startup_s:g} s start-up) = {self.per_point_s:.0f} s per point")
        count = (f"{self.points} point" + ("" if self.points == 1 else "s") if self.points is not None
                 else "an unknown number of points (no results/asv/benchmarks.json; one counted)")
        return (f"one session's estimated wall time: about {self.total_s / 60:.1f} min ({count} x {per}), "
                "plus one asv pass per side and the worktrees (not estimated)")

    def to_dict(self) -> dict:
        return {"points": self.points, "trials": self.trials, "paired_seconds": self.paired_seconds,
                "restarts_per_trial": self.restarts_per_trial, "startup_s": self.startup_s,
                "per_point_s": self.per_point_s, "total_s": self.total_s,
                "not_included": "one asv pass per side, the worktrees"}


def selected_points(repo: str, bench: str) -> int | None:
    """How many points `bench` selects in the repository's asv metadata (None: no readable metadata there)."""
    try:
        benchmarks = load_benchmarks(os.path.join(repo, "results", "asv", "benchmarks.json"))
    except UsageError:
        return None
    try:
        return len(make_plan(list(benchmarks.values()), full=True, bench=bench).run)
    except UsageError:
        return 0  # it selects nothing there: the study's gate will say so (exit 5, nothing compared)


def estimate(repo: str, args) -> SessionEstimate:
    """The paired part of one session of the study's checked `args` (--paired-seconds > 0)."""
    return SessionEstimate(points=selected_points(repo, args.bench), trials=args.trials_per_block,
                           paired_seconds=args.paired_seconds, restarts_per_trial=args.restarts_per_trial,
                           startup_s=args.pair_startup_s)


def check_deadline(est: SessionEstimate, deadline_min: float) -> None:
    """A UsageError when one session's estimate alone is past --deadline-min: it would be cut, keeping nothing."""
    if deadline_min and est.total_s > deadline_min * 60:
        raise UsageError(
            f"--deadline-min {deadline_min:g} ({deadline_min * 60:.0f} s) cannot hold one session; {est.line()}. "
            "Give fewer points per run (--bench), fewer --trials-per-block or a shorter --paired-seconds, "
            "or a later deadline")


__all__ = ["SessionEstimate", "WORKER_PAIR_STARTUP_S", "check_deadline", "estimate", "selected_points"]
