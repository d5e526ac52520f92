"""`rlperf history`: the steps in the stored asv history, per benchmark point, machine and host series.

    rlperf history [--config asv.conf.json] [--results-dir DIR] [--machine NAME] [--bench REGEX]
                   [--method edivisive|asv] [--pvalue P]

Reads the raw result files (values per commit, whatever their benchmark version), splits each
machine's points into one series per host and Python (as the site draws them), and prints each
change point as `last old commit..first new commit` with the ratio after/before and whether that is
a regression or an improvement (the benchmark's declared direction). The smallest step reported is
asv.conf.json's `regressions_thresholds` share, as on the site's regressions page; `--method asv` uses
the page's own fit (asv.step_detect), in both directions.
See docs/history.md for the methods and the known steps of the committed history.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rlperf.errors import UsageError


def _pvalue(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a p-value in (0, 1)")
    return value


def add_parser(subparsers, name: str, help_text: str):
    from rlperf.history.detect import DEFAULT_METHOD, DEFAULT_PVALUE, METHODS

    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--config", default="asv.conf.json", help="asv config (default: asv.conf.json)")
    p.add_argument("--results-dir", help="asv results folder (default: the config's results_dir)")
    p.add_argument("--machine", help="only this machine folder (default: every one)")
    p.add_argument("--bench", help="only the points whose name this regex finds")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help=f"change-point method (default: {DEFAULT_METHOD})")
    p.add_argument("--pvalue", type=_pvalue, default=DEFAULT_PVALUE,
                   help=f"e-divisive significance (default: {DEFAULT_PVALUE})")
    return p


def run(args) -> int:
    from rlperf.report import history_steps
    from rlperf.history.scan import read_asv_conf, scan

    config = Path(args.config)
    if not config.is_file():
        if args.results_dir is None:
            raise UsageError(f"no asv config {config}; give --config PATH or --results-dir DIR")
        thresholds, results_dir = {}, Path(args.results_dir)
    else:
        settings = read_asv_conf(config)
        thresholds = settings.thresholds
        results_dir = Path(args.results_dir) if args.results_dir else settings.results_dir
    scanned = scan(results_dir, thresholds, args.method, args.pvalue, args.machine, args.bench)
    print("\n".join(history_steps.lines(scanned, args.method)))
    return 0
