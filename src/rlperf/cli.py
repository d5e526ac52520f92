"""rlperf: measure and gate the hot path of massively parallel humanoid RL training (Unitree G1, SAC).

Measure how a learner batch of replay rows reaches the GPU (`replay`, `plan`), the fused Numba env
kernels against their numpy references (`env`, `noise`), one whole SAC iteration (`e2e`); then compare
two commits and decide with a typed exit code (`gate`); `summary` prints the headline tables of the
committed results. `rlperf COMMAND -h` shows each command's flags with their defaults. Exit codes:
0 ok, 1 the command's documented negative answer, 2 bad input (nothing measured or written); `gate` has
its own (docs/gate.md).
"""
# Developers: one module per command under rlperf.commands, each with add_parser() and run().

from __future__ import annotations

import argparse
import importlib
import sys

from rlperf import __version__
from rlperf.commands import helpfmt
from rlperf.errors import EXIT_INFRASTRUCTURE, EXIT_USAGE, InfrastructureError, UsageError

# name -> module under rlperf.commands (a dash in the name is an underscore there); imported lazily so
# `rlperf workload` never pays for torch/numba.
COMMANDS = {
    "workload": "Print the derived replay workload of a task/sim (Hydra overrides allowed).",
    "replay": "Measure replay placements (CPU sample, H2D, CPU sample+H2D, GPU sample).",
    "plan": "Rank replay placements by modelled time and memory on a machine's measured ceilings.",
    "traffic": "Print the multi-rank replay model's tables (bytes, memory, fit, time per rank) as markdown.",
    "env": "Measure fused Numba update_state kernels against their numpy references.",
    "noise": "Measure actor-noise generation: numpy, per-thread numpy, counter-based Numba (uniform, normal).",
    "noise-overhead": "Measure what drawing actor noise inside a task's update_state kernel costs.",
    "e2e": "Measure the single-GPU SAC iteration: collector, replay placement with prefetch, SAC learner.",
    "collector": "Measure the e2e collector: both MuJoCo steppers, then the collector step per arm.",
    "e2e-consistency": "Check that SAC statistics from the bf16 compact layout track the fp32 ones.",
    "gate": "Compare two commits' asv results and decide with a typed exit code.",
    "bench": "Run the asv suite on HEAD (default points, --quick), publish the site, print a summary.",
    "backfill": "Measure the history selection over past commits with one suite, into the asv history.",
    "gate-thresholds": "Derive a machine's gate factors from its measured noise (history, null runs) into a table.",
    "gate-power": "Measure the gate's detection power: known slowdowns committed in a clone, caught how often.",
    "machine": "Write or print the asv machine identity (CPU, RAM, GPU, driver, CUDA, torch, numba).",
    "history": "List the steps (change points) in the stored asv history, per benchmark, machine and host.",
    "site": "After asv publish: readable default graph views; check the site in headless Chromium.",
    "summary": "Print results/SUMMARY.md: the headline tables, from the committed result files only.",
}


def _load(name: str):
    return importlib.import_module(f"rlperf.commands.{name.replace('-', '_')}")


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlperf", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rlperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, help_text in COMMANDS.items():
        if wanted is None or name == wanted:
            _load(name).add_parser(sub, name, help_text)
        else:
            sub.add_parser(name, help=help_text)
    helpfmt.apply(parser)
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
    except InfrastructureError as exc:
        print(f"rlperf {args.command}: infrastructure error: {exc}", file=sys.stderr)
        return EXIT_INFRASTRUCTURE


if __name__ == "__main__":
    raise SystemExit(main())
