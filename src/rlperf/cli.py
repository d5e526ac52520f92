"""`rlperf <command>`: one module per command under rlperf.commands, each with add_parser() and run()."""

from __future__ import annotations

import argparse
import importlib
import sys

from rlperf.errors import EXIT_USAGE, UsageError

# name -> module under rlperf.commands; imported lazily so `rlperf workload` never pays for torch/numba.
COMMANDS = {
    "workload": "Print the derived replay workload of a task/sim (Hydra overrides allowed).",
    "replay": "Measure replay placements (CPU sample, H2D, CPU sample+H2D, GPU sample).",
    "env": "Measure fused Numba update_state kernels against their numpy references.",
    "e2e": "Measure the single-GPU SAC iteration: collector, replay placement with prefetch, SAC learner.",
    "noise": "Measure actor-noise generation: numpy, per-thread numpy, counter-based Numba (uniform, normal).",
    "gate": "Compare two commits' asv results and decide with a typed exit code.",
    "bench": "Run the asv suite on HEAD (default points, --quick), publish the site, print a summary.",
    "machine": "Write or print the asv machine identity (CPU, RAM, GPU, driver, CUDA, torch, numba).",
    "plan": "Rank replay placements by modelled time and memory on a machine's measured ceilings.",
}


def _load(name: str):
    return importlib.import_module(f"rlperf.commands.{name}")


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlperf", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, help_text in COMMANDS.items():
        if wanted is None or name == wanted:
            _load(name).add_parser(sub, name, help_text)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(_load(args.command).run(args) or 0)
    except UsageError as exc:
        print(f"rlperf {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
