"""`rlperf gate-power`: the detection power of `rlperf gate --run`, measured: how often a known slowdown is
caught, how often nothing is (docs/gate.md, Detection power). Hours on a 2-vCPU box: outside CI.

    rlperf gate-power study --trials 60 --passes 3 --out-json out/power/power.json --out-md out/power/power.md
    rlperf gate-power study --dry-run ...    # make the clone and commits, print the plan, measure nothing
    rlperf gate-power study --blocks 6 --passes-per-block 30 --k 3,5 --factors 1.05,1.07,1.10 --sizes 0.10 \\
        --work-dir out/power/work --out-json ... --out-md ...            # the block design
    rlperf gate-power study --resume --clone CLONE --work-dir out/power/work ...   # continue, or judge again
    rlperf gate-power study --blocks 2 --trials-per-block 30 --paired-seconds 5 --sizes 0.05,0.10,0.20 \\
        --steps 2,5,10 --factors 1.03,1.05,1.07 --work-dir ... --out-json ... --out-md ...   # paired sampling
    rlperf gate-power resample WORK_DIR --trials 60,30,15 --factors 1.03,1.05,1.10 --injected "'g1_walk_flat'"
    rlperf gate-power session-bias WORK_DIR  # are a block study's sessions biased beyond their passes' noise?
    rlperf gate-power nulls plan             # the null-run sample per core count, and one run's cost from history
    rlperf gate-power nulls run --log results/reports/gate/MACHINE/nulls   # one whole null gate run, recorded
    rlperf gate-power nulls summary results/reports/gate/MACHINE/nulls     # false alarms per run and per point
    rlperf gate-power headline DIR/power.json ... --factors 1.05   # docs/gate.md's power-table rows

`study`: in a throw-away clone of the repository, on top of --base, one commit per size injects a known
slowdown (--target: walk, motion-tracking, noise, replay-host or gpu-fused; rlperf.gate.power.targets
says what each injects, its size calibrated on the host unless --steps), and a null commit edits a comment. Each trial runs `rlperf gate
--run` on every arm with a fresh results folder. The block design (--blocks) instead runs ONE real gate
session of --passes-per-block kept passes per arm and block, and cuts them into disjoint trials of k
passes (or, with --paired-seconds, each point's pairs into --trials-per-block trials), each judged by
the gate's verdict path (`rlperf gate --no-run --passes-from`). Reported per arm: detection rate,
false alarms per unchanged point and per gate run (95 % Wilson intervals), CV of base medians, samples
per point, seconds per gate run. A study in which an arm judged no trial (e.g. every pair of a point skipped)
exits 5, not 0: it compared nothing. `resample` re-cuts a paired study's kept pairs into other trial
lengths without measuring; `session-bias` tests a block study's sessions against shuffled passes.
`nulls` measures the false alarms of a WHOLE gate run (docs/gate.md, Null runs): `run` gates the null arm
against --base with a CI leg's profile over the null-run sample (bench_plan.NULL_RUN_POINTS) and appends
one record to --log; `summary` reads the records; `plan` counts the sample and computes one run's wall
time from the committed asv durations.

(`rlperf gate` is one command of flags; the study has flags of its own with other meanings (--passes,
--factor, --bench, --out-json), so it is a command beside it, not an action inside it.)
"""

from __future__ import annotations

import argparse
import shlex
import sys


def _study_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", default=".", help="repository to clone (default: .)")
    p.add_argument("--base", default="HEAD", help="commit the arms are made on (default: HEAD)")
    p.add_argument("--trials", type=int, default=60, help="gate runs per arm (default 60)")
    p.add_argument("--sizes", default="0.05,0.10,0.20", help="nominal slowdowns (default 0.05,0.10,0.20)")
    p.add_argument("--passes", type=int, default=3, help="interleaved passes per gate run (default 3)")
    p.add_argument("--factor", type=float, help="gate factor (default: the clone's gate.toml)")
    p.add_argument("--target", default="walk",
                   help="what the arms edit (rlperf.gate.power.targets): walk (default), motion-tracking, noise, "
                        "replay-host, or gpu-fused (needs --steps)")
    p.add_argument("--bench", help="points the gate measures (default: the target's)")
    p.add_argument("--injected", help="regex of the points the injection slows (default: the target's)")
    p.add_argument("--machine", default="gate-power", help="asv machine name for the throw-away results")
    p.add_argument("--candidate-steps",
                   help="step counts the calibration measures, in one process (default: the target's own)")
    p.add_argument("--steps", help="pin the chain length per --sizes value (comma-separated, one each) "
                                   "instead of calibrating")
    p.add_argument("--seed", type=int, default=0, help="shuffles the arm order within each trial")
    p.add_argument("--out-json", required=True, help="power.json: plan, calibration, per-arm rows and every trial")
    p.add_argument("--out-md", required=True, help="power.md: the tables")
    p.add_argument("--dry-run", action="store_true", help="make the clone and commits, print the plan, no runs")
    p.add_argument("--no-null", action="store_true",
                   help="injected arms only (detection at more sizes, when a run's null arm already measured "
                        "false alarms)")
    p.add_argument("--null-only", action="store_true",
                   help="the null arm only (more false-alarm trials, e.g. a hold-out for a design chosen on "
                        "earlier ones)")
    p.add_argument("--blocks", type=int, default=0,
                   help="block design: this many gate sessions per arm, each cut into trials (default 0: one gate run per trial)")
    p.add_argument("--passes-per-block", type=int, default=30, help="kept passes per session (default 30)")
    p.add_argument("--k", default="3,5", help="block design: passes per trial, comma-separated (default 3,5)")
    p.add_argument("--factors", default="1.05,1.07,1.10", help="block design: gate factors judged (default 1.05,1.07,1.10)")
    p.add_argument("--work-dir", help="block design: keep every session here (absent or empty; default: a temp folder)")
    p.add_argument("--resume", action="store_true",
                   help="block design: continue the run kept in --work-dir (its sessions.json) in its --clone")
    p.add_argument("--clone", help="with --resume: the interrupted run's clone (holds the arm commits)")
    p.add_argument("--paired-seconds", type=float, default=0.0,
                   help="block design: judge paired sampling, T seconds per point per trial (default 0: passes)")
    p.add_argument("--trials-per-block", type=int, default=30,
                   help="with --paired-seconds: trials each session is cut into (default 30)")
    p.add_argument("--restarts-per-trial", type=int, default=1,
                   help="with --paired-seconds: fresh pairs of workers per trial, as --paired-restarts in one "
                        "gate run (default 1)")
    p.add_argument("--confirm", metavar="OFFSETS",
                   help="with --paired-seconds: also judge every trial as `rlperf gate --paired-confirm 1` "
                        "would, the pairs of the trial K later standing in for the confirming round, for each K "
                        "of OFFSETS (comma-separated; 1: right after, as a gate pairing one point)")
    p.add_argument("--screens", default="1",
                   help="with --confirm: the --paired-screen shares to judge (comma-separated, in (0, 1]; "
                        "default 1)")
    p.add_argument("--deadline-min", type=float, default=0.0,
                   help="block design: start no session after this many minutes, and stop one still running "
                        "then (cut: exit 5, no verdict); with --paired-seconds, refused up front (exit 2) when "
                        "one session's printed estimate does not fit (0: no deadline)")
    p.add_argument("--pair-startup-s", type=float, default=None,
                   help="with --paired-seconds: seconds one fresh pair of workers costs beyond its sampling, for "
                        "the session estimate (default: the H200 host's 6.4 s, "
                        "rlperf.gate.power.session_time.WORKER_PAIR_STARTUP_S)")


def _resample_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("work_dir", help="a paired study's --work-dir (its sessions.json and kept pairs)")
    p.add_argument("--trials", default="60,30,15", help="trials per session to cut the pairs into (comma-separated)")
    p.add_argument("--factors", default="1.03,1.05,1.10", help="gate factors judged (comma-separated)")
    p.add_argument("--injected", required=True, help="regex of the injected points")
    p.add_argument("--confirm", type=int, default=0, metavar="K",
                   help="judge with one confirming round: the pairs of the trial K later (0: none)")
    p.add_argument("--screen", type=float, default=1.0,
                   help="with --confirm: re-sample above 1 + SCREEN x (factor - 1), in (0, 1] (default 1)")
    p.add_argument("--out-md", help="also write the table here (atomically)")


def _session_bias_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("work_dir", help="a block study's --work-dir of kept passes (not paired)")
    p.add_argument("--shuffles", type=int, default=2000, help="random re-assignments of the passes to sessions")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffles")


def _nulls_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", default=".", help="repository (default: .)")
    p.add_argument("--profile", default="xeon", help="the gate.toml profile a null run gates with (default: xeon, "
                                                    "the Xeon leg's settings)")
    p.add_argument("--benchmarks", help="the suite's asv metadata (default: the repository's results/asv/benchmarks.json)")


def _nulls_parser(p: argparse.ArgumentParser) -> None:
    from rlperf.gate.power.null_plan import HISTORY_MACHINE, PAIRED_FROM

    actions = p.add_subparsers(dest="nulls_action", metavar="{plan,run,summary}")
    plan = actions.add_parser("plan", help="The sample per core count and one null run's wall time from history.",
                              description="The null-run sample per core count and one run's wall time, computed "
                                          "from committed asv durations (measured, not guessed).")
    _nulls_common(plan)
    plan.add_argument("--history-machine", default=HISTORY_MACHINE,
                      help=f"results/asv/<machine> whose durations price a run (default {HISTORY_MACHINE})")
    plan.add_argument("--paired-from", default=PAIRED_FROM,
                      help=f"folder of committed paired.json files for the worker start-up (default {PAIRED_FROM})")
    plan.add_argument("--cores", default="2,16", help="core counts to count the sample for (default 2,16)")
    plan.add_argument("--list", action="store_true", help="also list every point of the sample")
    run = actions.add_parser("run", help="One whole null gate run (null commit vs --base), appended to --log.",
                             description="One whole null gate run: a comment-only commit on --base in a throw-away "
                                         "clone, `rlperf gate --run --profile PROFILE` over the sample, its record "
                                         "appended to --log as a new file. Exit 0 with a verdict (whatever it "
                                         "said), 5 when the gate wrote none (the record says why).")
    _nulls_common(run)
    run.add_argument("--log", required=True, help="folder of the records (created; one new file per run)")
    run.add_argument("--base", default="HEAD", help="commit the null change goes on (default: HEAD)")
    run.add_argument("--machine", help="asv machine name for the gate (default: the gate's, `rlperf machine --print-name`)")
    summary = actions.add_parser("summary", help="False alarms per run and per point so far, with Wilson intervals.",
                                 description="What the records of a --log folder say: the share of runs that flag "
                                             "anything (target <= 5 %), the per-point rate, the points that flagged.")
    summary.add_argument("log", help="a `nulls run --log` folder")
    summary.add_argument("--out-md", help="also write the summary here (atomically)")
    summary.add_argument("--out-json", help="also write the figures as JSON here (atomically)")
def _headline_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("power_json", nargs="+", help="paired studies' power.json files (their folders are cited)")
    p.add_argument("--factors", default="1.05", help="the factors to give rows for (comma-separated; default 1.05)")
    p.add_argument("--confirm", type=int, default=1, help="the confirming round's offset K of the cell (0: none)")
    p.add_argument("--screen", type=float, default=0.6, help="the confirming round's screen of the cell")
    p.add_argument("--relative-to", default="results/reports/gate",
                   help="folders are cited relative to this (default results/reports/gate)")
    p.add_argument("--null-from", metavar="POWER_JSON",
                   help="take the null arm's false alarms from this --null-only study of the same point instead")
    p.add_argument("--out-md", help="also write the table here (atomically)")


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="{study,resample,session-bias,nulls,headline}")
    for action, add, text in (
            ("study", _study_parser, "Commit known slowdowns in a clone and measure how often the gate catches them."),
            ("resample", _resample_parser, "Re-judge a paired study's kept pairs as longer or shorter trials."),
            ("session-bias", _session_bias_parser,
             "Compare a block study's session medians with the same passes shuffled into sessions."),
            ("nulls", _nulls_parser, "Whole null gate runs: record one, summarize the log, or price one from history."),
            ("headline", _headline_parser,
             "docs/gate.md's power-table rows (the K 1 cell, Wilson intervals, host, achieved step) of paired studies.")):
        add(actions.add_parser(action, help=text, description=text))
    return p


def _command(args) -> str:
    """The command line that ran, for the report (sys.argv when rlperf was started as a program)."""
    argv = sys.argv[1:]
    return "rlperf " + shlex.join(argv) if argv[:2] == ["gate-power", args.action] else f"rlperf gate-power {args.action}"


def _resample(args) -> int:
    import os

    from rlperf.errors import UsageError
    from rlperf.atomic import write_text
    from rlperf.gate.outputs import check_output_path
    from rlperf.gate.power.resample import resample, to_markdown

    if args.confirm < 0 or not 0 < args.screen <= 1:
        raise UsageError("--confirm must be >= 0 and --screen in (0, 1]")
    if not os.path.isfile(os.path.join(args.work_dir, "sessions.json")):
        raise UsageError(f"{args.work_dir} holds no sessions.json (give a `rlperf gate-power study --work-dir`)")
    try:
        trials = [int(v) for v in args.trials.split(",")]
        factors = [float(v) for v in args.factors.split(",")]
    except ValueError:
        raise UsageError("--trials takes whole numbers (60,30), --factors numbers (1.03,1.05)") from None
    if min(trials) < 1 or not all(f > 1 for f in factors) or (args.confirm and args.confirm >= min(trials)):
        raise UsageError("--trials must be >= 1, --factors > 1 and --confirm below every --trials value")
    check_output_path(args.out_md, "--out-md")
    text = to_markdown(resample(args.work_dir, trials, factors, args.injected, args.confirm, args.screen),
                       _command(args))
    if args.out_md:
        write_text(args.out_md, text)
    print(text)
    return 0


def _session_bias(args) -> int:
    import os

    from rlperf.errors import UsageError
    from rlperf.gate.power.session_bias import session_bias, to_text

    if args.shuffles < 1:
        raise UsageError("--shuffles must be >= 1")
    if not os.path.isdir(args.work_dir):
        raise UsageError(f"{args.work_dir!r} is not a folder (give a `rlperf gate-power study --blocks --work-dir`)")
    print(to_text(session_bias(args.work_dir, args.shuffles, args.seed)))
    return 0


def _nulls(args) -> int:
    from rlperf.errors import UsageError

    if args.nulls_action is None:
        raise UsageError("give a nulls action: plan, run or summary (rlperf gate-power nulls -h)")
    if args.nulls_action == "summary":
        from rlperf.atomic import write_text
        from rlperf.gate.outputs import check_output_path
        from rlperf.gate.power import null_log, null_summary
        from rlperf.report.jsonio import write_json

        check_output_path(args.out_md, "--out-md")
        check_output_path(args.out_json, "--out-json")
        doc = null_summary.summarize(null_log.read(args.log))
        text = null_summary.to_markdown(doc, args.log)
        if args.out_json:
            write_json(args.out_json, {"schema": "rlperf.gate-nulls-summary/1", "log": args.log, **doc})
        if args.out_md:
            write_text(args.out_md, text)
        print(text, end="")
        return 0
    if args.nulls_action == "plan":
        try:
            cores = sorted({int(c) for c in args.cores.split(",")})
        except ValueError:
            raise UsageError(f"--cores {args.cores!r}: give comma-separated whole numbers, e.g. 2,16") from None
        if cores[0] < 1:
            raise UsageError("--cores: each core count must be >= 1")
        from rlperf.gate.power.null_plan import plan_lines

        print("\n".join(plan_lines(args.repo, args.profile, args.benchmarks, cores,
                                   history_machine=args.history_machine, paired_from=args.paired_from,
                                   listing=args.list)))
        return 0
    from rlperf.gate.power.null_plan import HISTORY_MACHINE, PAIRED_FROM, plan_lines
    from rlperf.gate.power.null_run import check, null_run

    check(args.repo, args.base, args.log, args.profile, args.benchmarks, args.machine)
    try:
        print("\n".join(plan_lines(args.repo, args.profile, args.benchmarks, [], history_machine=HISTORY_MACHINE,
                                   paired_from=PAIRED_FROM)), flush=True)
    except UsageError as exc:  # a repository without that history still runs; it just has no estimate
        print(f"no estimate: {exc}", flush=True)
    path, record = null_run(args.repo, args.base, args.log, profile=args.profile, machine=args.machine,
                            benchmarks_json=args.benchmarks)
    verdict = record["verdict"]
    print(f"record: {path}; gate exit {record['gate_exit']} in {record['seconds']:.0f} s"
          + (f"; {sum(f['status'] == 'regression' for f in verdict['findings'])} point(s) flagged as a "
             "regression" if verdict else "; NO verdict (not counted by the summary): " + (record["error"] or "")[-500:]))
    return 0 if verdict else 5
def _headline(args) -> int:
    import json
    import os

    from rlperf.atomic import write_text
    from rlperf.errors import UsageError
    from rlperf.gate.outputs import check_output_path
    from rlperf.gate.power.tables import HEADLINE_COLUMNS, headline_rows
    from rlperf.report.tables import markdown_table

    try:
        factors = [float(v) for v in args.factors.split(",")]
    except ValueError:
        raise UsageError(f"--factors {args.factors!r}: give comma-separated numbers, e.g. 1.05,1.25") from None
    check_output_path(args.out_md, "--out-md")
    def read(path: str) -> tuple[dict, str]:
        try:
            with open(path) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: not a readable power.json ({exc})") from None
        return doc, os.path.relpath(os.path.dirname(os.path.abspath(path)), os.path.abspath(args.relative_to)) + "/"

    null_doc, null_folder = read(args.null_from) if args.null_from else (None, "")
    rows = []
    for path in args.power_json:
        doc, folder = read(path)
        for factor in factors:
            try:
                rows += headline_rows(doc, folder, factor, args.confirm, args.screen, null_doc, null_folder)
            except (KeyError, ValueError) as exc:
                raise UsageError(f"{path}: {exc}") from None
    text = "\n".join(markdown_table(HEADLINE_COLUMNS, rows)) + "\n"
    if args.out_md:
        write_text(args.out_md, text)
    print(text, end="")
    return 0


def run(args) -> int:
    from rlperf.errors import UsageError

    if args.action is None:
        raise UsageError("give an action: study, resample, session-bias, nulls or headline (rlperf gate-power -h)")
    if args.action == "nulls":
        return _nulls(args)
    if args.action == "headline":
        return _headline(args)
    if args.action == "resample":
        return _resample(args)
    if args.action == "session-bias":
        return _session_bias(args)
    from rlperf.errors import EXIT_INFRASTRUCTURE
    from rlperf.gate.power.study import check_options, run_study, unjudged_arms
    from rlperf.gate.power.tables import to_markdown

    check_options(args)
    doc = run_study(args, _command(args))
    print(to_markdown(doc))
    empty = unjudged_arms(doc)
    if empty:  # a study that compared nothing is no result, however its gate sessions exited
        print(f"rlperf gate-power: no trial judged for {', '.join(empty)} (the log says why, e.g. a point's paired "
              f"sampling gave no pairs); {args.out_json} records it; no result (exit {EXIT_INFRASTRUCTURE})",
              file=sys.stderr)
        return EXIT_INFRASTRUCTURE
    return 0
