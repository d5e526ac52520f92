"""`rlperf traffic`: the multi-rank replay model's tables (bytes, memory, fit, predicted time per rank).

    rlperf traffic   # markdown: the generated block of docs/tier2-plan.md section 4

Computed from the composed workloads and the single-H200 ceilings of docs/limits.md; measures nothing,
needs no GPU (the model in replay.multirank.traffic, the Markdown in report.traffic_markdown).
"""

from __future__ import annotations


def add_parser(subparsers, name: str, help_text: str):
    return subparsers.add_parser(name, help=help_text, description=__doc__)


def run(args) -> int:
    from rlperf.report.traffic_markdown import markdown

    print(markdown(), end="")
    return 0
