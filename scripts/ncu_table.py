"""Markdown from what scripts/device/compact_ncu.sh brings back (runs on any machine, no GPU).

    python3 scripts/ncu_table.py ncu-raw.csv [--label sample_int4=gpu-fused-bf16 ...] [--sample-rows 32768]
    python3 scripts/ncu_table.py --ab ab.jsonl

The first form: Nsight Compute's raw page (`ncu --import R --csv --page raw --print-units base`), a column
per kernel, a row per metric. The second: the CUDA-event A/B of the kernel probe.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rlperf.errors import EXIT_USAGE
from rlperf.report.ncu_table import ab_markdown, ncu_markdown


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", help="ncu raw-page CSV")
    ap.add_argument("--ab", help="the kernel probe's JSON lines instead")
    ap.add_argument("--label", action="append", default=[], metavar="KERNEL=NAME", help="column name for a kernel")
    ap.add_argument("--sample-rows", type=int, default=None, help="rows per launch: adds DRAM bytes per row")
    args = ap.parse_args(argv)
    path = args.ab or args.csv
    if not path or (args.ab and args.csv):
        print("error: give one ncu CSV, or --ab JSONL", file=sys.stderr)
        return EXIT_USAGE
    if not Path(path).is_file():
        print(f"error: no such file: {path}", file=sys.stderr)
        return EXIT_USAGE
    bad = [x for x in args.label if "=" not in x]
    if bad:
        print(f"error: --label takes KERNEL=NAME, got {bad[0]!r}", file=sys.stderr)
        return EXIT_USAGE
    text = Path(path).read_text()
    try:
        if args.ab:
            lines = ab_markdown([json.loads(ln) for ln in text.splitlines() if ln.strip()])
        else:
            lines = ncu_markdown(text, labels=dict(x.split("=", 1) for x in args.label), sample_rows=args.sample_rows)
    except (ValueError, KeyError) as exc:
        print(f"error: {path}: {exc!r}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
