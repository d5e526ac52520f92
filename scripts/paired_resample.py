"""What longer (or shorter) paired trials would catch, from the pairs a `gate_power.py --paired-seconds`
run kept: every session's pairs cut into N trials, each judged by the gate's own rule for paired
points (median of per-block worse-ratios > factor, gate.judge), for several N at once. When N equals
the number of worker pairs a session ran (--paired-restarts), each trial is one pair's pairs; any
other N cuts equal consecutive runs, which may span two pairs of workers.

    python scripts/paired_resample.py WORK_DIR --trials 60,30,15 --factors 1.03,1.05,1.10 \
        --injected "'g1_walk_flat'" [--out-md resample.md]

It needs no clone and measures nothing. The verdicts at the session's own N are those `gate_power.py`
reached through `rlperf gate --no-run --passes-from`; the other N re-cut the same pairs.

`--confirm K [--screen S]` judges each trial as `rlperf gate --paired-confirm 1 --paired-screen S`
would: a trial above 1 + S x (factor - 1) is judged again with the pairs of the trial K later (past
the end, K earlier) joined to its own, the confirming round (gate_power.confirm_folder, without a clone).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from gate_power import confirm_trial, trial_pairs, wilson  # noqa: E402
from rlperf.gate import paired  # noqa: E402
from rlperf.gate.judge import _median_of_passes  # noqa: E402


def ratio(point: paired.PointPairs, block: int) -> float | None:
    """The gate's paired ratio of a point: the median of its per-block worse-ratios (gate.judge)."""
    got = _median_of_passes("lower", point.blocks(block))
    return None if got is None else got[2]


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
    lines = [f"command: `{command}`", "",
             "| arm | trials per session | s of pairs per point per trial | factor | detection | false alarms / unchanged point |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['arm']} | {r['trials_per_session']} | {r['seconds_per_trial']:.2g} | {r['factor']} | "
                     f"{_cell(r['detection'])} | {_cell(r['false_alarms_per_point'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("work_dir")
    p.add_argument("--trials", default="60,30,15")
    p.add_argument("--factors", default="1.03,1.05,1.10")
    p.add_argument("--injected", required=True, help="regex of the injected points")
    p.add_argument("--confirm", type=int, default=0, metavar="K",
                   help="judge with one confirming round: the pairs of the trial K later (0: none)")
    p.add_argument("--screen", type=float, default=1.0,
                   help="with --confirm: re-sample above 1 + SCREEN x (factor - 1), in (0, 1] (default 1)")
    p.add_argument("--out-md")
    args = p.parse_args(argv)
    if args.confirm < 0 or not 0 < args.screen <= 1:
        print("paired_resample: error: --confirm must be >= 0 and --screen in (0, 1]", file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(args.work_dir, "sessions.json")):
        print(f"paired_resample: error: {args.work_dir} holds no sessions.json (a gate_power.py --work-dir)",
              file=sys.stderr)
        return 2
    try:
        trials = [int(v) for v in args.trials.split(",")]
        factors = [float(v) for v in args.factors.split(",")]
    except ValueError:
        print("paired_resample: error: --trials takes integers, --factors numbers", file=sys.stderr)
        return 2
    if min(trials) < 1 or not all(f > 1 for f in factors) or (args.confirm and args.confirm >= min(trials)):
        print("paired_resample: error: --trials must be >= 1, --factors > 1 and --confirm below --trials",
              file=sys.stderr)
        return 2
    text = to_markdown(resample(args.work_dir, trials, factors, args.injected, args.confirm, args.screen),
                       " ".join(["scripts/paired_resample.py", *(argv if argv is not None else sys.argv[1:])]))
    if args.out_md:
        from rlperf.gate.outputs import write_text_atomic

        write_text_atomic(args.out_md, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
