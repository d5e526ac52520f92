"""`rlperf summary`: the text of results/SUMMARY.md, generated from the committed result files only.

    rlperf summary > results/SUMMARY.md
    rlperf summary --results other/results   # another results folder of the same layout

Every number printed is read from a result file that records its machine and command (report.summary).
"""

from __future__ import annotations

from pathlib import Path

from rlperf.errors import UsageError


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--results", default="results", type=Path,
                   help="results folder holding asv/ and reports/ (the layout of the repository's results/)")
    return p


def run(args) -> int:
    from rlperf.report.summary import summary_text

    if not args.results.is_dir():
        raise UsageError(f"--results: {args.results} is not a folder; give the results folder, e.g. --results results")
    print(summary_text(args.results))
    return 0
