"""`rlperf gate`: did HEAD make anything slower, or break parity, compared with BASE on this machine?

    rlperf gate --base origin/main --head HEAD [--machine NAME] [--run | --no-run]
               [--config gate.toml] [--factor 1.10] [--out-md gate.md] [--out-json gate.json]
    rlperf gate --backfill A..B | NEW[:branch]     # benchmark commits that have no results yet

Exit codes: 0 ok, 1 regression (or parity out of tolerance), 2 usage error, 3 benchmark failure,
4 coverage loss, 5 infrastructure error. See docs/gate.md.
"""

from __future__ import annotations

import argparse
import os
import sys


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", help="baseline commit (ref or SHA)")
    p.add_argument("--head", default="HEAD", help="commit under test (default: HEAD)")
    p.add_argument("--machine", help="asv machine name (default: `rlperf machine --print-name`)")
    p.add_argument("--results-dir", default="results", help="asv results folder (default: results)")
    p.add_argument("--config", help="gate thresholds file (default: gate.toml when present)")
    p.add_argument("--factor", type=float, help="default regression factor (overrides [gate] factor)")
    p.add_argument("--run", action=argparse.BooleanOptionalAction, default=None,
                   help="benchmark base and head first, each in a git worktree with `asv run --python=same "
                        "--set-commit-hash` (default: only commits without stored results)")
    p.add_argument("--bench", help="asv --bench regex: gate only a subset of the suite")
    p.add_argument("--backfill", metavar="RANGE", help="benchmark A..B or NEW[:branch] instead of gating")
    p.add_argument("--asv-config", help="asv config for commits that carry none "
                                        "(default: asv.conf.json of --repo)")
    p.add_argument("--repo", default=".", help="git repository (default: the current directory)")
    p.add_argument("--out-md", help="write the Markdown summary (PR comment) here")
    p.add_argument("--out-json", help="write the JSON verdict here")
    return p


def _where(args):
    from rlperf.asvtools.git import toplevel
    from rlperf.errors import UsageError
    from rlperf.gate.exitcodes import InfrastructureError
    from rlperf.gate.flow import Where
    from rlperf.measure.machine import machine_name

    try:
        repo = toplevel(args.repo)
    except InfrastructureError as exc:
        raise UsageError(f"--repo {args.repo!r} is not a git repository") from exc
    if args.machine is not None and not args.machine.strip():
        raise UsageError("--machine must not be empty")
    return Where(repo=repo, results_dir=os.path.abspath(args.results_dir),
                 machine=args.machine or machine_name(),
                 conf=os.path.abspath(args.asv_config or os.path.join(repo, "asv.conf.json")), bench=args.bench)


def _write(path: str | None, text: str) -> None:
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def _reproduce(args, where) -> str:
    return (f"rlperf gate --base {args.base} --head {args.head} --machine {where.machine} "
            f"--results-dir {args.results_dir}" + (f" --bench '{args.bench}'" if args.bench else ""))


def run(args) -> int:
    from rlperf.errors import UsageError
    from rlperf.gate.config import load_config
    from rlperf.gate.flow import backfill, gate
    from rlperf.gate.report import to_json, to_markdown

    if args.backfill and args.base:
        raise UsageError("--backfill benchmarks a range; it does not take --base")
    if not (args.backfill or args.base):
        raise UsageError("give --base REF (with --head, default HEAD) or --backfill A..B")
    where = _where(args)
    echo = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731 - asv's progress goes to stderr

    if args.backfill:
        code, messages = backfill(where, args.backfill, echo=echo)
        print("\n".join(messages))
        return int(code)

    verdict = gate(where, args.base, args.head, load_config(args.config, factor=args.factor),
                   run=args.run, echo=echo)
    markdown = to_markdown(verdict, reproduce=_reproduce(args, where))
    print(markdown)
    _write(args.out_md, markdown)
    _write(args.out_json, to_json(verdict) + "\n")
    return int(verdict.exit_code)
