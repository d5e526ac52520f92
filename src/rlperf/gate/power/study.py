"""The power study end to end: check the options, commit the arms in a throw-away clone, run the trials
(or the block design), write power.json and power.md atomically (paths checked before anything runs)."""

from __future__ import annotations

import datetime
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile

from rlperf.asvtools.git import git, resolve, toplevel
from rlperf.errors import InfrastructureError, UsageError
from rlperf.atomic import write_text
from rlperf.gate.outputs import check_output_path
from rlperf.gate.power.injection import clone_repo, make_arms
from rlperf.gate.power.targets import target
from rlperf.gate.power import session_time
from rlperf.gate.power.session_run import SessionCut
from rlperf.gate.power.sessions import gate_command, run_blocks, run_trial
from rlperf.gate.power.tables import summarize, to_markdown
from rlperf.report.jsonio import write_json


def _numbers(text: str, kind, flag: str, example: str) -> list:
    try:
        return [kind(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give comma-separated {kind.__name__}s, e.g. {example}") from None


def check_options(args) -> None:
    """Every study option checked (and the comma lists parsed) before anything is cloned or measured."""
    what = target(args.target)
    args.bench = args.bench or what.bench
    args.injected = args.injected or what.injected
    args.sizes = _numbers(args.sizes, float, "--sizes", "0.05,0.10,0.20")
    if not all(0 < s < 10 for s in args.sizes):
        raise UsageError("--sizes: each size must be a fraction > 0 (0.10 = 10 %)")
    if args.null_only and args.no_null:
        raise UsageError("--null-only and --no-null exclude each other")
    if args.null_only:
        args.sizes = []
    args.k = _numbers(args.k, int, "--k", "3,5")
    args.factors = _numbers(args.factors, float, "--factors", "1.05,1.10")
    if not all(k >= 1 for k in args.k) or not all(math.isfinite(f) and f > 1 for f in args.factors):
        raise UsageError("--k must be >= 1 and every --factors value finite and > 1")
    if args.steps is not None:
        args.steps = _numbers(args.steps, int, "--steps", "3,5 (one per --sizes value)")
        if len(args.steps) != len(args.sizes) or min(args.steps) < 1:
            raise UsageError(f"--steps: give one chain length >= 1 per --sizes value ({len(args.sizes)})")
    if not what.candidates and args.steps is None and not args.resume and args.sizes:  # a null arm injects nothing
        raise UsageError(f"--target {args.target}: give --steps (this target is not calibrated on the host)")
    args.confirm = _numbers(args.confirm, int, "--confirm", "1,15") if args.confirm else []
    args.screens = _numbers(args.screens, float, "--screens", "1,0.6")
    if args.confirm and not args.paired_seconds:
        raise UsageError("--confirm applies to --paired-seconds (a confirming round re-samples pairs)")
    if any(k < 1 or k >= args.trials_per_block for k in args.confirm) or not all(0 < v <= 1 for v in args.screens):
        raise UsageError("--confirm offsets must be >= 1 and below --trials-per-block; --screens in (0, 1]")
    if args.paired_seconds and not (math.isfinite(args.paired_seconds) and args.paired_seconds > 0 and args.blocks):
        raise UsageError("--paired-seconds must be a finite number > 0, with --blocks (the block design)")
    if args.blocks < 0:
        raise UsageError("--blocks must be >= 0")
    if not (math.isfinite(args.deadline_min) and args.deadline_min >= 0):
        raise UsageError("--deadline-min must be a finite number of minutes >= 0 (0: no deadline)")
    if args.pair_startup_s is None:
        args.pair_startup_s = session_time.WORKER_PAIR_STARTUP_S
    if not (math.isfinite(args.pair_startup_s) and args.pair_startup_s >= 0):
        raise UsageError("--pair-startup-s must be a finite number of seconds >= 0")
    if args.resume:
        if not (args.work_dir and os.path.isfile(os.path.join(args.work_dir, "sessions.json"))
                and args.clone and os.path.isdir(os.path.join(args.clone, ".git"))):
            raise UsageError("--resume needs --work-dir holding sessions.json and --clone, the run's git clone")
    elif args.work_dir and os.path.exists(args.work_dir) and os.listdir(args.work_dir):
        raise UsageError(f"--work-dir {args.work_dir!r} is not empty; give an absent or empty folder")
    args.candidate_steps = sorted(set(_numbers(args.candidate_steps, int, "--candidate-steps", "2,4,8")
                                      if args.candidate_steps else what.candidates))
    calibrates = args.sizes and args.steps is None and not args.resume  # a null arm or fixed steps: none timed
    if (calibrates and not args.candidate_steps) or (args.candidate_steps and args.candidate_steps[0] < 1):
        raise UsageError("--candidate-steps: give whole numbers >= 1")
    for flag in ("trials", "passes", "passes_per_block", "trials_per_block", "restarts_per_trial"):
        if getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1")
    for flag in ("bench", "injected"):
        try:
            re.compile(getattr(args, flag))
        except re.error as exc:
            raise UsageError(f"--{flag} is not a valid regular expression: {exc}") from None
    if not args.resume:
        try:
            resolve(toplevel(args.repo), args.base)
        except InfrastructureError as exc:
            raise UsageError(f"--repo {args.repo!r} --base {args.base!r}: {exc}") from None
    check_output_path(args.out_json, "--out-json")
    check_output_path(args.out_md, "--out-md")
    args.session_estimate = None
    if args.blocks and args.paired_seconds:  # the last check: it prints what the others let run
        args.session_estimate = session_time.estimate(args.repo, args)
        session_time.check_deadline(args.session_estimate, args.deadline_min)


def _utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_facts() -> dict:
    """Where the study ran (the published table names the host): this machine's rlperf name, CPU model,
    the CPU flags hash that tells host types of one name apart (gate.host), the cores it may use."""
    from rlperf.measure.machine import cpu_flags_sha256, cpu_model, machine_name

    return {"name": machine_name(), "cpu": cpu_model(), "cpu_flags_sha256": cpu_flags_sha256()[:16],
            "cores_usable": len(os.sched_getaffinity(0)), "started": _utc()}


def run_study(args, command: str) -> dict:
    """The study of checked `args` (check_options); returns the power.json document it also wrote.
    A session cut by an interrupt or the deadline (session_run.SessionCut) writes power.json with the
    cut session under "cut" and no tables (no power.md), and raises on: exit 5, never a verdict."""
    if args.session_estimate is not None:
        print(f"rlperf gate-power: {args.session_estimate.line()}", file=sys.stderr, flush=True)
    clone = os.path.abspath(args.clone) if args.resume else tempfile.mkdtemp(prefix="gate-power-clone-")
    try:
        saved = {"sessions": []}
        if args.resume:  # an interrupted run's sessions: same clone, base and arm commits
            with open(os.path.join(args.work_dir, "sessions.json")) as fh:
                saved = json.load(fh)
            base, arms, calibration = saved["base"], saved["arms"], {"resumed": True, "fixed_steps": args.steps}
        else:
            clone_repo(args.repo, clone)
            base = git(os.path.abspath(args.repo), "rev-parse", args.base)
            arms, calibration = make_arms(clone, base, args.sizes, args.candidate_steps, args.dry_run, args.steps,
                                          args.target, null=not args.no_null)
        doc = {"schema": "rlperf.gate-power/1", "command": command, "host": host_facts(),
               "machine": args.machine, "base": base, "passes": args.passes, "bench": args.bench,
               "injected": args.injected, "dry_run": args.dry_run, "calibration": calibration,
               "plan": [{**a, "command": " ".join(gate_command(clone, base, a["sha"], args, "<fresh>", "<verdict>"))}
                        for a in arms]}
        if args.session_estimate is not None:
            doc["session_estimate"] = args.session_estimate.to_dict()
        if args.blocks and not args.dry_run:
            try:
                doc.update(run_blocks(clone, base, arms, args, saved["sessions"]))
            except SessionCut as cut:
                doc["host"]["finished"] = _utc()
                write_json(args.out_json, {**doc, "complete": False, "cut": cut.record})
                how = "stopped at --deadline-min" if cut.record["cut"] == "deadline" else "interrupted"
                raise SessionCut(f"block {cut.record['block'] + 1} {cut.record['arm']}: session {how} "
                                 f"after {cut.record['seconds']:.0f} s, kept in {cut.record['dir']} (gate.log: its "
                                 f"output so far); {args.out_json} records it; no verdict, no {args.out_md}",
                                 cut.record) from None
        else:
            trials = []
            order = random.Random(args.seed)
            for trial in range(0 if args.dry_run else args.trials):
                for arm in order.sample(arms, len(arms)):
                    print(f"rlperf gate-power: trial {trial + 1}/{args.trials} {arm['arm']}", file=sys.stderr,
                          flush=True)
                    trials.append(run_trial(clone, base, arm, args))
            doc.update(arms=summarize(arms, trials, args.injected), trials=trials)
        doc["host"]["finished"] = _utc()
        write_json(args.out_json, doc)
        write_text(args.out_md, to_markdown(doc))
        return doc
    finally:
        if not args.resume:
            shutil.rmtree(clone, ignore_errors=True)


def unjudged_arms(doc: dict) -> list[str]:
    """The arms (with factor and k) of a study document that ran trials but judged none: a paired point whose
    workers gave no pairs is left out of every trial, and a study of only such points compared nothing."""
    if doc.get("dry_run"):
        return []
    return [f"{a['arm']}" + (f" at x{a['factor']:g}" if a.get("factor") is not None else "")
            + (f" (k {a['k']})" if a.get("k") is not None else "") for a in doc.get("arms", []) if not a.get("trials")]


__all__ = ["check_options", "run_study", "unjudged_arms"]
