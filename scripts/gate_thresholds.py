"""Generate a machine's thresholds table (rlperf.gate.thresholds) from its stored history and null runs.

    python scripts/gate_thresholds.py --machine NAME [--results-dir results/asv]
        [--null-runs results/reports/replay/NAME/run-noise] [--out results/reports/gate/NAME/thresholds]
        [--config gate.toml] [--check]

Writes OUT/thresholds.json (what `rlperf gate` reads, path from gate.toml [gate] thresholds) and
OUT/PROVENANCE.md (this command, the rule, the table for people), and prints the Markdown table.
--check writes nothing: exit 1 when the committed table or PROVENANCE.md differs from what the results give now.
The null-runs folder defaults to results/reports/replay/<machine>/run-noise where it exists.
Exit codes: 0 written (or up to date), 1 --check found a stale table, 2 bad input (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlperf.errors import UsageError
from rlperf.gate.config import load_config
from rlperf.gate.outputs import write_text_atomic
from rlperf.gate.thresholds import TABLE_NAME, derive, markdown, provenance, to_json


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", required=True)
    ap.add_argument("--results-dir", type=Path, default=Path("results/asv"))
    ap.add_argument("--null-runs", type=Path, help="folder of run*/results.json (default: the machine's run-noise)")
    ap.add_argument("--out", type=Path, help="default results/reports/gate/<machine>/thresholds")
    ap.add_argument("--config", default="gate.toml", help="for the advisory ceiling shown (default gate.toml)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the committed table is stale")
    args = ap.parse_args(argv)
    try:
        null_runs = args.null_runs
        default_null = Path("results/reports/replay") / args.machine / "run-noise"
        if null_runs is None and default_null.is_dir():
            null_runs = default_null
        out = args.out or Path("results/reports/gate") / args.machine / "thresholds"
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} exists and is not a folder")
        ceiling = load_config(args.config).advisory_above
        entries = derive(args.results_dir, args.machine, null_runs)
    except UsageError as exc:
        print(f"gate_thresholds: {exc}", file=sys.stderr)
        return 2
    command = " ".join(["python scripts/gate_thresholds.py", f"--machine {args.machine}",
                        f"--results-dir {args.results_dir.as_posix()}"]
                       + ([f"--null-runs {null_runs.as_posix()}"] if null_runs else []) + [f"--out {out.as_posix()}"])
    files = {TABLE_NAME: to_json(args.machine, entries),
             "PROVENANCE.md": provenance(args.machine, command, entries, ceiling)}
    print("\n".join(markdown(args.machine, entries, ceiling)))
    if args.check:
        stale = [name for name, text in files.items()
                 if not (out / name).is_file() or (out / name).read_text() != text]
        if stale:
            print(f"gate_thresholds: {', '.join(str(out / n) for n in stale)} stale: regenerate with `{command}`",
                  file=sys.stderr)
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_text_atomic(str(out / name), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
