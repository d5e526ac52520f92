"""One power-study trial: the kept passes (or pairs) of a gate session cut into disjoint trials.

A session is one real `rlperf gate --run --keep-passes DIR`; each trial here is a passes folder of its
own (links to the kept passes, paired.json holding that trial's pairs only), judged by the gate's own
verdict path (`--no-run --passes-from`). A confirming round (`--paired-confirm 1`) is stood in for by
the pairs of another trial of the same session.
"""

from __future__ import annotations

import json
import os
import shutil

from rlperf.errors import InfrastructureError
from rlperf.gate import paired
from rlperf.report.jsonio import write_json


def trial_folders(passes_dir: str, k: int, scratch: str) -> list[str]:
    """Disjoint runs of k consecutive kept passes, each as a passes folder of its own (links to the passes)."""
    with open(os.path.join(passes_dir, "passes.json")) as fh:
        doc = json.load(fh)
    out = []
    for t in range(len(doc["order"]) // k):
        folder = os.path.join(scratch, f"k{k}-t{t}")
        os.makedirs(folder)
        for j in range(k):
            os.symlink(os.path.join(os.path.abspath(passes_dir), f"pass-{t * k + j}"), os.path.join(folder, f"pass-{j}"))
        write_json(os.path.join(folder, "passes.json"), {**doc, "order": doc["order"][t * k:(t + 1) * k]})
        out.append(folder)
    return out


def trial_pairs(point, trials: int, t: int):
    """Trial t of `trials` of one point's kept pairs: its own pairs of workers' segments when the session
    ran R per trial (--paired-restarts trials*R), else the t-th of `trials` equal consecutive runs."""
    if point.segments and len(point.segments) % trials == 0:  # R = len / trials pairs of workers per trial
        per = len(point.segments) // trials
        lo = sum(point.segments[:t * per])
        hi = lo + sum(point.segments[t * per:(t + 1) * per])
    else:
        size = len(point.pairs) // trials
        lo, hi = t * size, (t + 1) * size
    return paired.PointPairs(name=point.name, number=point.number, kind=point.kind, pairs=point.pairs[lo:hi],
                             skipped=point.skipped, error=point.error)


def paired_trial_folders(passes_dir: str, trials: int, scratch: str) -> list[str]:
    """Every point's kept pairs cut into `trials` consecutive, disjoint runs, each a passes folder of its own
    (the session's single pass linked, paired.json holding that run's pairs only)."""
    spec, points, meta = paired.load(os.path.join(passes_dir, "paired.json"))
    unpaired = [f"{p.name}: {p.error or p.skipped or 'no pairs'}" for p in points if not p.pairs]
    if unpaired:  # cut into trials they would all read the session's one pass: a noise of 0, no evidence
        raise InfrastructureError(f"{passes_dir}: paired sampling gave no pairs for {len(unpaired)} point(s), so "
                                  "their trials would all repeat one pass: " + "; ".join(unpaired))
    out = []
    for t in range(trials):
        folder = os.path.join(scratch, f"paired-t{t}")
        os.makedirs(folder)
        os.symlink(os.path.join(os.path.abspath(passes_dir), "pass-0"), os.path.join(folder, "pass-0"))
        shutil.copy2(os.path.join(passes_dir, "passes.json"), os.path.join(folder, "passes.json"))
        chunks = [trial_pairs(p, trials, t) for p in points]
        paired.save(os.path.join(folder, "paired.json"), chunks, spec, **meta)
        out.append(folder)
    return out


def confirm_trial(t: int, trials: int, offset: int) -> int | None:
    """The trial whose pairs stand in for trial t's confirming round: `offset` later, else `offset`
    earlier, else none (a session too short for the offset)."""
    other = t + offset if t + offset < trials else t - offset
    return other if other >= 0 else None


def confirm_folder(passes_dir: str, trials: int, t: int, names, scratch: str, offset: int = 1) -> str:
    """Trial t's passes folder with a confirming round (`--paired-confirm 1`, gate.interleave._confirm)
    for the points in `names`: the pairs of the trial `offset` later (t + offset; past the end,
    t - offset) join theirs, as the gate's own round of fresh worker pairs would. The gate confirms
    after every paired point had its first round, so with P points paired the round comes about
    P point-times later: offset 1 is a gate pairing one point, larger offsets one pairing many."""
    spec, points, meta = paired.load(os.path.join(passes_dir, "paired.json"))
    other = confirm_trial(t, trials, offset)
    folder = os.path.join(scratch, f"paired-t{t}-confirmed-{offset}")
    os.makedirs(folder)
    os.symlink(os.path.join(os.path.abspath(passes_dir), "pass-0"), os.path.join(folder, "pass-0"))
    shutil.copy2(os.path.join(passes_dir, "passes.json"), os.path.join(folder, "passes.json"))
    chunks = []
    for p in points:
        chunk = trial_pairs(p, trials, t)
        if p.name in names and other is not None:
            more = trial_pairs(p, trials, other)
            chunk.pairs += more.pairs
            chunk.confirm_rounds = 1
        chunks.append(chunk)
    paired.save(os.path.join(folder, "paired.json"), chunks, spec, **meta)
    return folder


__all__ = ["confirm_folder", "confirm_trial", "paired_trial_folders", "trial_folders", "trial_pairs"]
