"""What longer (or shorter) paired trials would catch, from the pairs a paired study kept (`rlperf
gate-power study --paired-seconds`): every session's pairs cut into N trials, each judged by the gate's
own rule for paired points (gate.verdict.judge_point on the blocks: median of per-block worse-ratios >
factor), for several N at once. When N equals the number of worker pairs a session ran
(--paired-restarts), each trial is one pair's pairs; any other N cuts equal consecutive runs, which may
span two pairs of workers. It needs no clone and measures nothing; the verdicts at the session's own N
are those the study reached through `rlperf gate --no-run --passes-from`.

With a confirming offset K (and a screen S), each trial is judged as `rlperf gate --paired-confirm 1
--paired-screen S` would: a trial above 1 + S x (factor - 1) is judged again with the pairs of the trial
K later (past the end, K earlier) joined to its own, the confirming round (trials.confirm_trial).
"""

from __future__ import annotations

import json
import os
import re

from rlperf.gate import paired
from rlperf.gate.power.tables import wilson
from rlperf.gate.power.trials import confirm_trial, trial_pairs
from rlperf.gate.results import Point
from rlperf.gate.verdict import Policy, judge_point
from rlperf.report.tables import markdown_table


def _as_point(point: paired.PointPairs) -> Point:
    return Point(key=point.name, name=point.name, value=1.0, stats=None, samples=None, version=None, env="paired")


def ratio(point: paired.PointPairs, block: int) -> float | None:
    """The gate's paired ratio of a point: what judge_point makes of its per-block pairs (None: no block)."""
    policy = Policy(direction="lower", factor=float("inf"), tolerance=None, source="resample")
    found = judge_point(_as_point(point), _as_point(point), policy, {}, 0.0, pass_values=point.blocks(block),
                        paired=True)
    return found.ratio if found.method.startswith("paired-") else None  # else no block measured on both


def flagged(point: paired.PointPairs, block: int, factor: float) -> bool | None:
    got = ratio(point, block)
    return None if got is None else got > factor


def confirmed(point: paired.PointPairs, n: int, t: int, block: int, factor: float, offset: int,
              screen: float) -> bool | None:
    """Trial t's verdict after one confirming round with the pairs of trial t + offset (or t - offset)."""
    first = ratio(trial_pairs(point, n, t), block)
    if first is None or first <= 1 + screen * (factor - 1):
        return None if first is None else False
    other = confirm_trial(t, n, offset)
    pooled = trial_pairs(point, n, t)
    if other is not None:
        pooled.pairs += trial_pairs(point, n, other).pairs
    return flagged(pooled, block, factor)


def resample(work: str, trials: list[int], factors: list[float], injected: str, offset: int = 0,
             screen: float = 1.0) -> list[dict]:
    """Rows per arm, N and factor: detection and false alarms per unchanged point, as (hits, n)."""
    with open(os.path.join(work, "sessions.json")) as fh:
        sessions = json.load(fh)["sessions"]
    pattern, rows = re.compile(injected), []
    for n in trials:
        for factor in factors:
            tally: dict = {}
            for s in sessions:
                path = os.path.join(s["dir"] if os.path.isdir(s["dir"]) else os.path.join(work, os.path.basename(s["dir"])),
                                    "passes", "paired.json")
                spec, points, _ = paired.load(path)
                cell = tally.setdefault(s["arm"], {"hit": 0, "n_inj": 0, "alarm": 0, "n_other": 0, "secs": []})
                for p in points:
                    for t in range(n):
                        verdict = (confirmed(p, n, t, spec.block, factor, offset, screen) if offset
                                   else flagged(trial_pairs(p, n, t), spec.block, factor))
                        if verdict is None:
                            continue
                        if s["arm"] != "null" and pattern.search(p.name):
                            cell["hit"] += verdict
                            cell["n_inj"] += 1
                        else:
                            cell["alarm"] += verdict
                            cell["n_other"] += 1
                cell["secs"].append(spec.seconds / n)
            for arm, c in tally.items():
                rows.append({"arm": arm, "trials_per_session": n, "factor": factor, "confirm": offset,
                             "screen": screen,
                             "seconds_per_trial": min(c["secs"]), "detection": (c["hit"], c["n_inj"]),
                             "false_alarms_per_point": (c["alarm"], c["n_other"])})
    return rows


def _cell(hits_n) -> str:
    hits, n = hits_n
    if not n:
        return "n/a"
    lo, hi = wilson(hits, n)
    return f"{hits / n:.1%} ({hits}/{n}; 95 % CI {lo:.1%}–{hi:.1%})"


def to_markdown(rows: list[dict], command: str) -> str:
    table = [[r["arm"], r["trials_per_session"], f"{r['seconds_per_trial']:.2g}", r["factor"], _cell(r["detection"]),
              _cell(r["false_alarms_per_point"])] for r in rows]
    lines = [f"command: `{command}`", "",
             *markdown_table(["arm", "trials per session", "s of pairs per point per trial", "factor", "detection",
                              "false alarms / unchanged point"], table, align="lrrrll")]
    return "\n".join(lines) + "\n"


__all__ = ["confirmed", "flagged", "ratio", "resample", "to_markdown"]
