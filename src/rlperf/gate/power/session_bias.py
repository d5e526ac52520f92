"""Is each gate session of a block study biased? The spread of the sessions' median per-pass ratio (per
arm and point) against the spread when the same passes are shuffled into sessions at random.

A p near 0 would mean sessions differ beyond what their passes' own noise gives (results/reports/gate/MEASUREMENTS.md:
on the 2-vCPU box p was 0.16-0.85, so more passes, not fresh sessions, narrow the spread).
"""

from __future__ import annotations

import glob
import json
import os
import random
import statistics
from dataclasses import dataclass

from rlperf.errors import UsageError
from rlperf.gate.passdir import load


@dataclass(frozen=True)
class SessionSpread:
    arm: str
    point: str
    medians: list[float]  # per session, its median per-pass ratio head/base
    observed_sd: float
    shuffled_median_sd: float
    p: float  # share of shuffles whose sd of session medians is >= the observed one


def pass_ratios(work: str) -> dict[tuple[str, str], dict[str, list[float]]]:
    """{(arm, point): {session folder: [head/base per kept pass]}} of the study's `block*-ARM` sessions."""
    per: dict = {}
    for folder in sorted(glob.glob(os.path.join(work, "block*"))):
        passes = os.path.join(folder, "passes")
        if not os.path.isfile(os.path.join(passes, "passes.json")):
            continue  # a session that kept nothing (its gate failed)
        with open(os.path.join(passes, "passes.json")) as fh:
            doc = json.load(fh)
        arm = os.path.basename(folder).split("-", 1)[1]
        for base, head in load(passes, doc["base"], doc["head"], doc["machine"]).runs:
            heads = {name: p for (_, name), p in head.points.items()}
            for (_, name), p in base.points.items():
                h = heads.get(name)
                if p.measured and h is not None and h.measured and p.value:
                    per.setdefault((arm, name), {}).setdefault(folder, []).append(h.value / p.value)
    return per


def _sd(values) -> float:
    return float(statistics.pstdev([float(v) for v in values]))


def session_bias(work: str, shuffles: int = 2000, seed: int = 0) -> list[SessionSpread]:
    """Per arm and point: the observed spread of session medians and its permutation p-value."""
    per = pass_ratios(work)
    if not per:
        raise UsageError(f"{work!r} holds no kept passes in block*-ARM/passes (a `rlperf gate-power study "
                         "--blocks --work-dir` folder without --paired-seconds)")
    rng, out = random.Random(seed), []
    for (arm, name), sessions in sorted(per.items()):
        medians = [statistics.median(v) for v in sessions.values()]
        observed = _sd(medians)
        pool = [r for v in sessions.values() for r in v]
        k = min(len(v) for v in sessions.values())
        shuffled = []
        for _ in range(shuffles):
            rng.shuffle(pool)
            shuffled.append(_sd([statistics.median(pool[i * k:(i + 1) * k]) for i in range(len(sessions))]))
        out.append(SessionSpread(arm, name, medians, observed, statistics.median(shuffled),
                                 sum(s >= observed for s in shuffled) / len(shuffled)))
    return out


def to_text(rows: list[SessionSpread]) -> str:
    return "\n".join(f"{r.arm} {r.point}: session medians {[round(m, 3) for m in r.medians]}, sd {r.observed_sd:.4f}; "
                     f"shuffled median sd {r.shuffled_median_sd:.4f}; p(shuffled sd >= observed) {r.p:.2f}"
                     for r in rows)


__all__ = ["SessionSpread", "pass_ratios", "session_bias", "to_text"]
