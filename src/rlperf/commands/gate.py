"""`rlperf gate`: did HEAD make anything slower, or break parity, compared with BASE on this machine?

    rlperf gate --base origin/main --head HEAD [--machine NAME] [--run [--quick] [--passes K] [--paired S]
               [--keep-passes DIR] [--store] [--allow-dirty] | --no-run [--passes-from DIR]] [--config gate.toml]
               [--profile NAME] [--factor 1.10] [--bench REGEX]
               [--accept-changed NAME ...] [--allow-host-change] [--out-md gate.md] [--out-json gate.json]
    rlperf gate --backfill A..B | NEW[:branch]     # benchmark commits that have no results yet
    rlperf gate --bisect A..B [--run]              # name the first commit of A..B that regressed

Settings: gate.toml's [gate], then a [profile.NAME] (what one CI leg measures and how; default: gpu
where a CUDA device is visible, else xeon), then --quick, then each flag given here. The verdict names
the profile and every override.

Exit codes: 0 ok, 1 regression (or parity out of tolerance), 2 usage error, 3 benchmark failure,
4 coverage loss, 5 infrastructure error (includes a host change, corrupt results, a verdict that compared
no point, and any crash of the gate itself), 6 changed benchmark version. See docs/gate.md.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import traceback
from dataclasses import replace


def add_parser(subparsers, name: str, help_text: str):
    from rlperf.asvtools.store import DEFAULT_WAIT_S

    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--base", help="baseline commit (ref or SHA)")
    p.add_argument("--head", default="HEAD", help="commit under test (default: HEAD)")
    p.add_argument("--machine", help="asv machine name (default: `rlperf machine --print-name`)")
    p.add_argument("--results-dir", help="asv results folder (default: asv.conf.json's results_dir; with --run and "
                                         "no --store, the git-ignored .asv/gate-results)")
    p.add_argument("--store-wait", type=_number, metavar="SECONDS",
                   help="how long a run waits for another rlperf writer's lock on the results folder before "
                        f"exit 5 (default: {DEFAULT_WAIT_S:g}); results are merged in point by point, never "
                        "overwritten")
    p.add_argument("--config", help="gate thresholds file (default: gate.toml when present)")
    p.add_argument("--profile", metavar="NAME",
                   help="the [profile.NAME] of the config: what one CI leg measures and how (bench, passes, paired "
                        "sampling). Default for a comparison: gpu where a CUDA device is visible, else xeon (the leg "
                        "of a machine like this one); --backfill applies only a profile named here")
    p.add_argument("--factor", type=_number, help="default regression factor, finite and > 1 "
                                                  "(overrides [gate] factor)")
    p.add_argument("--run", action=argparse.BooleanOptionalAction, default=None,
                   help="--run: measure base and head now, interleaved (--passes), each from its own git "
                        "worktree; --no-run: compare stored results only (default: benchmark only commits "
                        "without stored results, then compare stored results)")
    p.add_argument("--store", action="store_true",
                   help="with --run: store the measurements in the results history (--results-dir, default "
                        "asv.conf.json's results_dir) instead of the git-ignored .asv/gate-results")
    p.add_argument("--passes", type=_integer, help="interleaved passes of --run (default: the profile's)")
    p.add_argument("--quick", action="store_true",
                   help="with --run: a fast look, 1 pass and no paired sampling (flags given here still win); "
                        "the verdict says loudly that it is not what CI runs")
    p.add_argument("--paired", type=_number, metavar="SECONDS",
                   help="with --run: then sample every time_ (and sampled track_) point for SECONDS with base and head live in two "
                        "processes, in turn, and judge it on those pairs (default: the profile's paired_seconds, else [gate]'s; 0: off)")
    p.add_argument("--paired-bench", metavar="REGEX",
                   help="with --paired: pair only the points this regex finds (default: the profile's "
                        "paired_bench, else [gate]'s, else every pairable point)")
    p.add_argument("--paired-restarts", type=_integer, metavar="N",
                   help="with --paired: N fresh pairs of worker processes per point, one after another, "
                        "SECONDS split between them (default: the profile's, else [gate] paired_restarts, else 1)")
    p.add_argument("--paired-confirm", type=_integer, metavar="N",
                   help="with --paired: sample a point the first round flags as a regression again, up to N "
                        "more rounds, and judge it on all its pairs (default: the profile's, else [gate] paired_confirm, else 0)")
    p.add_argument("--paired-screen", type=_number, metavar="SHARE",
                   help="with --paired-confirm: re-sample a point whose ratio exceeds 1 + SHARE x (its paired "
                        "factor - 1), in (0, 1]; its verdict stays at the factor (default: the profile's "
                        "paired_screen, else [gate]'s, else 1: only points the judge flags)")
    p.add_argument("--keep-passes", metavar="DIR",
                   help="with --run: also keep every pass's results folder in DIR (absent or empty), with "
                        "DIR/passes.json, for a judge elsewhere (--passes-from)")
    p.add_argument("--passes-from", metavar="DIR",
                   help="judge the passes a `--run --keep-passes DIR` kept, like --run (median of per-pass "
                        "ratios); --results-dir holds the base's own record (versions, directions, host)")
    p.add_argument("--bench", help="asv --bench regex: gate only a subset (points and coverage alike; "
                                   "default: the profile's)")
    p.add_argument("--accept-changed", action="append", default=[], metavar="NAME",
                   help="accept a benchmark whose asv version changed (glob on the name, repeatable)")
    p.add_argument("--allow-host-change", action="store_true",
                   help="compare stored results even when base and head were measured on different hosts")
    p.add_argument("--allow-dirty", action="store_true",
                   help="with --run, when --head is the checked-out commit: measure the working tree, uncommitted "
                        "changes included, as the head (its results are not stored)")
    p.add_argument("--backfill", metavar="RANGE", help="benchmark A..B or NEW[:branch] instead of gating")
    p.add_argument("--bisect", metavar="A..B", help="name the first commit of A..B whose points regressed "
                                                    "against A (exit 1 when found, 0 when A..B does not regress)")
    p.add_argument("--asv-config", help="asv config for commits that carry none "
                                        "(default: asv.conf.json of --repo)")
    p.add_argument("--repo", default=".", help="git repository (default: the current directory)")
    p.add_argument("--out-md", help="write the Markdown summary (PR comment) here")
    p.add_argument("--out-json", help="write the JSON verdict here")
    return p


def _number(text: str) -> float:
    """argparse type: any float literal (range checks come later, with the config's own message)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _where(args):
    from rlperf.asvtools.git import toplevel
    from rlperf.errors import UsageError
    from rlperf.gate.exitcodes import InfrastructureError
    from rlperf.gate.flow import Where
    from rlperf.measure.machine import check_machine_name, machine_name

    try:
        repo = toplevel(args.repo)
    except InfrastructureError as exc:
        raise UsageError(f"--repo {args.repo!r} is not a git repository") from exc
    if args.machine is not None and not args.machine.strip():
        raise UsageError("--machine must not be empty")
    machine = check_machine_name(args.machine) if args.machine is not None else check_machine_name(
        machine_name(), "machine name (RLPERF_MACHINE or `rlperf machine --print-name`)")
    conf = os.path.abspath(args.asv_config or os.path.join(repo, "asv.conf.json"))
    return Where(repo=repo, results_dir=_results_dir(args, repo, conf), machine=machine, conf=conf, bench=args.bench,
                 store_wait_s=Where.store_wait_s if args.store_wait is None else args.store_wait)


def _results_dir(args, repo: str, conf: str) -> str:
    """--results-dir; else a --run's git-ignored local folder (unless --store); else the history:
    asv.conf.json's results_dir (`_history_dir`)."""
    from rlperf.gate.flow import local_results_dir

    if args.results_dir is not None:
        return os.path.abspath(args.results_dir)
    if args.run is True and not args.store and not args.backfill:  # --backfill exists to store
        return local_results_dir(repo)
    return _history_dir(repo, conf)


def _history_dir(repo: str, conf: str) -> str:
    """The committed results history: asv.conf.json's results_dir, relative to the repository (asv's own default,
    results, without one)."""
    from rlperf.asvtools.conf import load_conf
    from rlperf.errors import UsageError
    from rlperf.gate.exitcodes import InfrastructureError

    if not os.path.isfile(conf):
        return os.path.join(repo, "results")
    try:
        history = load_conf(conf).get("results_dir", "results")
    except InfrastructureError as exc:
        raise UsageError(f"{exc}; fix it, or pass --results-dir") from None
    if not isinstance(history, str) or not history.strip():
        raise UsageError(f"results_dir in {conf} is {history!r}: expected a folder; fix it, or pass --results-dir")
    return os.path.join(repo, history)


def _reproduce(args, where, config=None) -> str:
    """The command line that repeats this verdict, every argument shell-quoted (a --bench regex too)."""
    words = ["rlperf", "gate", "--base", args.base, "--head", args.head, "--machine", where.machine]
    if args.results_dir is not None:
        words += ["--results-dir", args.results_dir]
    if args.bench:
        words += ["--bench", args.bench]
    words += ["--run"] if args.run else (["--no-run"] if args.run is False else [])
    if config is not None and config.profile:
        words += ["--profile", config.profile]
    if args.quick:
        words += ["--quick"]
    for flag, value in (("--passes", args.passes), ("--paired", args.paired), ("--paired-bench", args.paired_bench),
                        ("--paired-restarts", args.paired_restarts), ("--paired-confirm", args.paired_confirm),
                        ("--paired-screen", args.paired_screen), ("--passes-from", args.passes_from)):
        if value is not None:
            words += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    for pattern in args.accept_changed:
        words += ["--accept-changed", pattern]
    words += [flag for flag, on in (("--store", args.store), ("--allow-host-change", args.allow_host_change),
                                    ("--allow-dirty", args.allow_dirty)) if on]
    return shlex.join(words)


def _validate(args):
    """Everything that can be wrong with the invocation, before any measurement."""
    from rlperf.gate.outputs import check_output_dir, check_output_path
    from rlperf.errors import UsageError
    from rlperf.gate.config import load_config
    from rlperf.gate.results import compile_bench

    given = [flag for flag, value in (("--base", args.base), ("--backfill", args.backfill),
                                      ("--bisect", args.bisect)) if value]
    if len(given) != 1:
        raise UsageError("give exactly one of --base REF (with --head, default HEAD), --backfill A..B or "
                         f"--bisect A..B (got {', '.join(given) or 'none'})")
    if args.bisect and ".." not in args.bisect:
        raise UsageError(f"--bisect {args.bisect!r}: give a range A..B")
    if args.passes is not None and args.run is not True:
        raise UsageError("--passes applies to --run (interleaved measurement) only")
    if args.quick and args.run is not True:
        raise UsageError("--quick applies to --run (interleaved measurement) only")
    if (args.paired is not None or args.paired_bench is not None or args.paired_restarts is not None
            or args.paired_confirm is not None or args.paired_screen is not None) and args.run is not True:
        raise UsageError("--paired, --paired-bench, --paired-restarts, --paired-confirm and --paired-screen apply "
                         "to --run (it measures base and head now) only")
    if args.keep_passes is not None and (args.run is not True or not args.base):
        raise UsageError("--keep-passes applies to a --base/--head comparison with --run only")
    if args.keep_passes is not None and not args.keep_passes.strip():
        raise UsageError("--keep-passes must not be empty")
    if args.store and args.run is not True:
        raise UsageError("--store applies to --run only (it chooses where --run's measurements go); stored "
                         "comparisons read --results-dir, --backfill always stores")
    if args.allow_dirty and (args.run is not True or not args.base):
        raise UsageError("--allow-dirty applies to a --base/--head comparison with --run only (it measures the "
                         "working tree as the head)")
    if args.allow_dirty and (args.store or args.keep_passes is not None):
        raise UsageError("--allow-dirty cannot go with --store or --keep-passes: the working tree's results would "
                         "be kept under the commit's SHA without being its code")
    if args.passes_from is not None:
        if args.run is True or not args.base:
            raise UsageError("--passes-from applies to a --base/--head comparison without --run (it measures nothing)")
        if not args.passes_from.strip():
            raise UsageError("--passes-from must not be empty")
        if os.path.exists(args.passes_from) and not os.path.isdir(args.passes_from):
            raise UsageError(f"--passes-from {args.passes_from!r} is a file; give the folder --keep-passes wrote")
    compile_bench(args.bench)
    if args.store_wait is not None and not (math.isfinite(args.store_wait) and args.store_wait >= 0):
        raise UsageError(f"--store-wait must be a finite number of seconds >= 0, got {args.store_wait:g}")
    for flag in ("out_md", "out_json"):
        check_output_path(getattr(args, flag), "--" + flag.replace("_", "-"))
    check_output_dir(args.keep_passes, "--keep-passes")
    return load_config(args.config, profile=args.profile, default_profile=None if args.backfill else _default_profile,
                       quick=args.quick, bench=args.bench,
                       factor=args.factor, passes=args.passes, paired_seconds=args.paired,
                       paired_bench=args.paired_bench, paired_restarts=args.paired_restarts,
                       paired_confirm=args.paired_confirm, paired_screen=args.paired_screen)


def _default_profile() -> tuple[str, str]:
    """The profile of a comparison that names none (gate.config.default_profile): asked only when the
    config defines profiles. --backfill gets none by default: a plain backfill measures every suite."""
    from rlperf.gate.config import default_profile
    from rlperf.measure.machine import machine_identity

    return default_profile(machine_identity()["gpu_count"] > 0)


def _label(verdict, config) -> None:
    """The verdict names the settings it ran under: profile, --quick and command-line overrides."""
    from rlperf.gate.config import settings_label

    verdict.profile, verdict.quick = config.profile, config.quick
    verdict.mode = "; ".join(part for part in (settings_label(config), verdict.mode) if part)


def _gate(args) -> int:
    from rlperf.gate.config import with_table
    from rlperf.atomic import write_text
    from rlperf.gate.flow import backfill, gate, gate_working_tree
    from rlperf.gate.report import to_dict, to_markdown
    from rlperf.report.jsonio import write_json

    config = _validate(args)
    where = _where(args)
    where = replace(where, bench=config.bench)  # --bench, else the profile's
    config = with_table(config, where.machine, where.repo)  # the machine's factors from measured noise
    echo = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731 - asv's progress goes to stderr

    if args.backfill:
        code, messages = backfill(where, args.backfill, echo=echo, allow_host_change=args.allow_host_change)
        print("\n".join(messages))
        return int(code)
    if args.bisect:
        return _bisect(args, where, config, echo)

    options = dict(accept_changed=tuple(args.accept_changed), allow_host_change=args.allow_host_change,
                   keep_passes=args.keep_passes, passes_from=args.passes_from, echo=echo)
    changed = _uncommitted(args, where)
    verdict = (gate_working_tree(where, args.base, args.head, config, changed=changed, **options) if changed
               else gate(where, args.base, args.head, config, run=args.run, **options))
    _label(verdict, config)
    if args.run is True:  # measured on this host now (stored results were measured on their history's host)
        _note_foreign_factors(verdict, config, where)
    markdown = to_markdown(verdict, reproduce=_reproduce(args, where, config))
    print(markdown)
    if args.out_json:
        write_json(args.out_json, to_dict(verdict))
    if args.out_md:
        write_text(args.out_md, markdown)
    return int(verdict.exit_code)


def _note_foreign_factors(verdict, config, where) -> None:
    """Say so in the verdict when the derived factors judging this host's measurements come from another host's
    noise (gate.host)."""
    from rlperf.gate.host import foreign_factors_note

    if not any(t.factor is not None for t in (config.table or {}).values()):
        return  # gate.toml's factors only: no host's noise behind them
    note = foreign_factors_note(_history_dir(where.repo, where.conf), where.machine)
    if note:
        verdict.notes.append(note)


def _uncommitted(args, where) -> list[str]:
    """The uncommitted paths to measure with the head (--allow-dirty), or []; a UsageError when the
    head is the checked-out commit, the working tree differs from it and nothing allows that."""
    from rlperf.errors import UsageError
    from rlperf.gate.flow import uncommitted_head

    if args.run is False or args.passes_from is not None:
        return []  # stored results and kept passes are the commit's own: the working tree plays no part
    changed = uncommitted_head(where, args.head)
    if changed and not args.allow_dirty:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise UsageError(f"--head {args.head!r} is the checked-out commit, but the working tree has uncommitted "
                         f"changes ({shown}): the gate would measure the commit without them. Commit them, stash "
                         "them (git stash -u), or pass --run --allow-dirty to measure the working tree as the head "
                         "(its results are not stored)")
    return changed


def _bisect(args, where, config, echo) -> int:
    from rlperf.gate.bisect import bisect
    from rlperf.gate.exitcodes import GateExit, InfrastructureError

    try:
        found = bisect(where, args.bisect, config, run=args.run, echo=echo)
    except InfrastructureError as exc:
        print(f"rlperf gate --bisect: {exc}", file=sys.stderr)
        return int(GateExit.INFRASTRUCTURE)
    print(found.summary())
    return int(found.exit_code)


def run(args) -> int:
    """The gate's exit code; usage errors propagate (exit 2), any other crash is infrastructure (5)."""
    from rlperf.errors import UsageError
    from rlperf.gate.exitcodes import GateExit

    try:
        return _gate(args)
    except UsageError:
        raise
    except Exception:  # a crash is never a verdict: exit 5 with the traceback in the log
        print("rlperf gate: internal error (exit 5, infrastructure; not a verdict on the code):\n"
              + traceback.format_exc(), file=sys.stderr, flush=True)
        return int(GateExit.INFRASTRUCTURE)
