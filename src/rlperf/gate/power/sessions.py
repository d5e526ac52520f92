"""Gate sessions of the power study: running `rlperf gate --run` on every arm, and judging what they kept.

Sessions and trials run `rlperf gate` as a subprocess (a fresh interpreter per gate run, as CI runs it);
the kept passes are judged in process by the gate's own verdict path (gate.flow.gate with
passes_from, what `rlperf gate --no-run --passes-from` calls), never by a copy of the judge.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from rlperf.gate import paired
from rlperf.gate.config import load_config
from rlperf.gate.flow import Where, gate
from rlperf.gate.passdir import load
from rlperf.gate.power.session_run import SessionCut, run_logged
from rlperf.gate.power.tables import summarize
from rlperf.gate.power.trials import confirm_folder, paired_trial_folders, trial_folders
from rlperf.gate.results import load_points
from rlperf.gate.verdict import worth_confirming
from rlperf.report.jsonio import write_json


def judge_config(clone: str) -> str:
    """A gate config with no [[rule]]: the factor under study (--factor / --factors) applies to every
    point, where the repository's rules would override it (gate.toml gives bench_replay x1.25). Kept in
    the clone's .git folder: in the worktree it would make the checked-out arm a dirty head (exit 2)."""
    path = os.path.join(clone, ".git", "gate-power.toml")
    if not os.path.isfile(path):
        with open(path, "w") as fh:
            fh.write("# written by rlperf gate-power: no [[rule]], so --factor applies to every point\n"
                     "[gate]\nfactor = 1.10\npasses = 3\n")
    return path


def gate_command(clone: str, base: str, head: str, args, results_dir: str, verdict: str) -> list[str]:
    return [sys.executable, "-m", "rlperf", "gate", "--repo", clone, "--base", base, "--head", head, "--run",
            "--passes", str(args.passes), "--bench", args.bench, "--machine", args.machine,
            "--results-dir", results_dir, "--config", judge_config(clone),
            *(["--factor", str(args.factor)] if args.factor else []), "--out-json", verdict]


def samples_per_point(results_dir: str, machine: str, sha: str) -> list[int]:
    return [len(p.samples or []) for p in load_points(results_dir, machine, sha).values() if p.measured]


def run_trial(clone: str, base: str, arm: dict, args) -> dict:
    """One gate run on a fresh results folder; returns what the summary needs."""
    scratch = tempfile.mkdtemp(prefix="gate-power-trial-")
    try:
        verdict_path = os.path.join(scratch, "verdict.json")
        cmd = gate_command(clone, base, arm["sha"], args, os.path.join(scratch, "results"), verdict_path)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=clone)
        seconds = time.perf_counter() - start
        if not os.path.isfile(verdict_path):
            raise RuntimeError(f"gate wrote no verdict (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(verdict_path) as fh:
            verdict = json.load(fh)
        samples = samples_per_point(os.path.join(scratch, "results"), args.machine, arm["sha"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"arm": arm["arm"], "exit_code": verdict["exit_code"], "seconds": seconds, "samples": samples,
            "points": {f["name"]: {"status": f["status"], "ratio": f["ratio"], "base": f["base"]}
                       for f in verdict["findings"] if f["base"] is not None}}


def run_session(clone: str, base: str, arm: dict, args, session_dir: str, timeout_s: float | None = None) -> dict:
    """One real gate session of `--passes-per-block` interleaved passes, every pass kept in session_dir.
    The gate's output goes to session_dir/gate.log as it runs, and session.json says the session started
    before it does (session_run: a cut leaves both); past `timeout_s`, or interrupted, it raises
    session_run.SessionCut, its record completed with the arm and its session.json rewritten as cut."""
    os.makedirs(session_dir)
    cmd = gate_command(clone, base, arm["sha"], args, os.path.join(session_dir, "record"),
                       os.path.join(session_dir, "verdict.json"))
    if args.paired_seconds:
        cmd[cmd.index("--passes") + 1] = "1"
        # one fresh pair of workers per trial, as one real gate run of --paired-seconds has
        cmd += ["--paired", str(args.paired_seconds * args.trials_per_block),
                "--paired-restarts", str(args.trials_per_block * args.restarts_per_trial)]
    else:
        cmd[cmd.index("--passes") + 1] = str(args.passes_per_block)
    cmd += ["--keep-passes", os.path.join(session_dir, "passes")]
    marker = os.path.join(session_dir, "session.json")
    info = {"arm": arm["arm"], "sha": arm["sha"], "loadavg_before": os.getloadavg(), "started_utc": _utc(),
            "complete": False}
    write_json(marker, info)
    try:
        code, seconds = run_logged(cmd, clone, os.path.join(session_dir, "gate.log"), timeout_s)
    except SessionCut as cut:
        cut.record.update(info, log="gate.log", stopped_utc=_utc())  # the log: in the session's folder
        write_json(marker, cut.record)
        raise
    info.update(exit_code=code, seconds=seconds, loadavg_after=os.getloadavg(), complete=True)
    write_json(marker, info)
    return info


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def judge_trial(clone: str, base: str, arm: dict, args, passes: str, record: str, factor: float) -> dict:
    """The gate's verdict on one trial's passes, in process: gate.flow.gate with passes_from, what
    `rlperf gate --no-run --passes-from PASSES --results-dir RECORD --factor F` runs."""
    config = load_config(judge_config(clone), bench=args.bench, factor=factor)
    where = Where(repo=clone, results_dir=os.path.abspath(record), machine=args.machine,
                  conf=os.path.join(clone, "asv.conf.json"), bench=config.bench)
    verdict = gate(where, base, arm["sha"], config, run=False, passes_from=passes, echo=lambda _line: None)
    findings = [f.to_dict() for f in verdict.findings]  # as --out-json writes them (an infinite ratio: None)
    return {"exit_code": int(verdict.exit_code),
            "points": {f["name"]: {"status": f["status"], "ratio": f["ratio"], "base": f["base"]}
                       for f in findings if f["base"] is not None}}


def judge_sessions(clone: str, base: str, arms: list[dict], args, sessions: list[dict]) -> list[dict]:
    """Every session's kept passes cut into trials of each k, judged at each factor."""
    by_arm = {a["arm"]: a for a in arms}
    trials = []
    for s in sessions:
        passes = os.path.join(s["dir"], "passes")
        if not os.path.isfile(os.path.join(passes, "passes.json")):
            print(f"rlperf gate-power: {s['dir']} kept no passes (gate exit {s['exit_code']}); left out", file=sys.stderr)
            continue
        unpaired = _unpaired(passes) if args.paired_seconds else []
        if unpaired:  # its trials would be judged on the one asv pass, 30 copies of one number: not a paired trial
            print(f"rlperf gate-power: {s['dir']}: paired sampling gave no pairs for {', '.join(unpaired)}; "
                  "left out", file=sys.stderr)
            continue
        samples = samples_per_point(os.path.join(passes, "pass-0"), args.machine, s["sha"])
        for k in ([0] if args.paired_seconds else args.k):  # k 0: paired trials
            scratch = tempfile.mkdtemp(prefix="gate-power-judge-")
            try:
                folders = (paired_trial_folders(passes, args.trials_per_block, scratch) if k == 0
                           else trial_folders(passes, k, scratch))
                seconds = _trial_seconds(s, args) if k == 0 else s["seconds"] * k / s["passes"]
                for index, folder in enumerate(folders):
                    for factor in args.factors:
                        record = os.path.join(s["dir"], "record")
                        judged = judge_trial(clone, base, by_arm[s["arm"]], args, folder, record, factor)
                        row = {"arm": s["arm"], "k": k, "factor": factor, "block": s["block"],
                               "trial_in_block": index, "seconds": seconds, "samples": samples}
                        trials.append({**row, "confirm": 0, "screen": 1.0, **judged})
                        for offset, screen in (confirm_designs(args) if k == 0 else []):
                            trials.append({**row, "confirm": offset, "screen": screen, **_confirmed(
                                clone, base, by_arm[s["arm"]], args, judged, (passes, index, scratch, offset),
                                record, factor, screen)})
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return trials


def _unpaired(passes: str) -> list[str]:
    """The points of a paired session's kept pairs that have none (skipped or failed: the gate judged them
    on their passes instead)."""
    path = os.path.join(passes, "paired.json")
    if not os.path.isfile(path):
        return ["every point (no paired.json)"]
    _, points, _ = paired.load(path)
    return [p.name for p in points if not p.pairs]


def confirm_designs(args) -> list[tuple[int, float]]:
    """(offset, screen) of every confirming design --confirm and --screens ask for."""
    return [(offset, screen) for offset in args.confirm for screen in args.screens]


def _confirmed(clone: str, base: str, arm: dict, args, judged: dict, where: tuple, record: str, factor: float,
               screen: float) -> dict:
    """The trial's verdict after one confirming round (`--paired-confirm 1 --paired-screen SCREEN`):
    unchanged when nothing passed the screen, else those points judged again on their pairs and
    those of the trial `offset` later (confirm_folder). where: (passes dir, trial, scratch, offset)."""
    passes, index, scratch, offset = where
    flagged = {name for name, p in judged["points"].items()
               if worth_confirming(p["status"], p["ratio"], factor, screen)}
    if not flagged:
        return {**judged, "confirmed": []}
    folder = confirm_folder(passes, args.trials_per_block, index, flagged, scratch, offset)
    again = judge_trial(clone, base, arm, args, folder, record, factor)
    shutil.rmtree(folder, ignore_errors=True)
    return {**again, "confirmed": sorted(flagged)}


def _trial_seconds(session: dict, args) -> float | None:
    """What one paired gate run would take: the session's fixed part (worktrees, one asv pass per side)
    plus one trial's share of each point's paired wall time (start-ups included); None when the kept
    pairs carry no wall time (sessions before gate.paired recorded it)."""
    _, points, _ = paired.load(os.path.join(session["dir"], "passes", "paired.json"))
    walls = [p.wall for p in points]
    if not all(walls):
        return None
    return max(session["seconds"] - sum(walls), 0.0) + sum(walls) / args.trials_per_block


def per_pass_ratios(sessions: list[dict], ratios_of: list[dict]) -> dict:
    """Per arm and point, the ratio head/base of every kept pass (ratios_of[i]: session i's
    session_ratios): the noise a trial's median works against."""
    out: dict = {}
    for s, ratios in zip(sessions, ratios_of):
        for name, values in ratios.items():
            out.setdefault(s["arm"], {}).setdefault(name, []).extend(values)
    return out


def session_ratios(session: dict, args) -> dict:
    """{point: [head/base per kept pass, or per paired block]} of one session (empty when it kept none)."""
    passes = os.path.join(session["dir"], "passes")
    if not os.path.isfile(os.path.join(passes, "passes.json")):
        return {}
    if os.path.isfile(os.path.join(passes, "paired.json")):
        spec, points, _ = paired.load(os.path.join(passes, "paired.json"))
        return {p.name: [h / b for b, h in p.blocks(spec.block) if b] for p in points if p.pairs}
    with open(os.path.join(passes, "passes.json")) as fh:
        doc = json.load(fh)
    out: dict = {}
    for base_res, head_res in load(passes, doc["base"], doc["head"], args.machine).runs:
        heads = {name: p for (_, name), p in head_res.points.items()}
        for (_, name), p in base_res.points.items():
            h = heads.get(name)
            if p.measured and h is not None and h.measured and p.value:
                out.setdefault(name, []).append(h.value / p.value)
    return out


def _set_aside(folder: str) -> str:
    """Move a cut session's folder to a free `cut-<name>[-N]` beside it (out of the `block*` folders
    session_bias reads, and out of the way of a --resume that runs that block again); returns where."""
    parent, name = os.path.split(folder)
    aside = next(path for n in range(1000) if not os.path.exists(
        path := os.path.join(parent, f"cut-{name}" + (f"-{n}" if n else ""))))
    os.rename(folder, aside)
    return aside


def run_blocks(clone: str, base: str, arms: list[dict], args, sessions: list[dict]) -> dict:
    """The block design: sessions (arms alternating, shuffled per block) after those already kept
    (`sessions`, from --resume), then every trial judged."""
    work = os.path.abspath(args.work_dir or tempfile.mkdtemp(prefix="gate-power-work-"))
    os.makedirs(work, exist_ok=True)
    order, start, sessions = random.Random(args.seed), time.time(), list(sessions)
    first = 1 + max((x["block"] for x in sessions), default=-1)
    for block in range(first, args.blocks):
        if args.deadline_min and time.time() - start > args.deadline_min * 60:
            print(f"rlperf gate-power: deadline reached after {block} block(s)", file=sys.stderr, flush=True)
            break
        for arm in order.sample(arms, len(arms)):
            left = args.deadline_min * 60 - (time.time() - start) if args.deadline_min else None
            if left is not None and left <= 0:  # the block's next session would be cut at once
                print(f"rlperf gate-power: deadline reached in block {block + 1}", file=sys.stderr, flush=True)
                break
            what = (f"1 pass, {args.trials_per_block} x {args.paired_seconds:g} s of pairs per point"
                    if args.paired_seconds else f"{args.passes_per_block} passes")
            print(f"rlperf gate-power: block {block + 1}/{args.blocks} {arm['arm']} ({what})", file=sys.stderr, flush=True)
            folder = os.path.join(work, f"block{block}-{arm['arm']}")
            if os.path.exists(folder):  # a session of a run killed outright (no SessionCut): not resumable
                _set_aside(folder)
            try:
                info = run_session(clone, base, arm, args, folder, timeout_s=left)
            except SessionCut as cut:  # kept beside the sessions, never among them: a cut one is no result
                cut.record.update(block=block, dir=_set_aside(folder), sessions_before=len(sessions))
                write_json(os.path.join(work, "sessions.json"),
                           {"base": base, "arms": arms, "sessions": sessions, "cut": cut.record})
                raise
            sessions.append({**info, "block": block, "dir": folder, "passes": args.passes_per_block})
            write_json(os.path.join(work, "sessions.json"), {"base": base, "arms": arms, "sessions": sessions})
    trials = judge_sessions(clone, base, arms, args, sessions)
    rows = []
    for k in ([0] if args.paired_seconds else args.k):
        for confirm, screen in [(0, 1.0), *(confirm_designs(args) if k == 0 else [])]:
            for factor in args.factors:
                mine = [t for t in trials if t["k"] == k and t["factor"] == factor
                        and (t.get("confirm", 0), t.get("screen", 1.0)) == (confirm, screen)]
                rows += [{**r, "k": k, "factor": factor, "confirm": confirm, "screen": screen}
                         for r in summarize(arms, mine, args.injected)]
    ratios_of = [session_ratios(x, args) for x in sessions]
    return {"blocks": args.blocks, "passes_per_block": args.passes_per_block, "work_dir": work,
            "paired_seconds": args.paired_seconds, "trials_per_block": args.trials_per_block,
            "restarts_per_trial": args.restarts_per_trial,
            "sessions": [{**{k: v for k, v in x.items() if k != "dir"},
                          "median_pass_ratio": {n: statistics.median(r) for n, r in ratios.items()}}
                         for x, ratios in zip(sessions, ratios_of)],
            "per_pass_ratios": per_pass_ratios(sessions, ratios_of), "arms": rows, "trials": trials}


__all__ = ["gate_command", "judge_config", "judge_sessions", "judge_trial", "run_blocks", "run_session", "run_trial"]
