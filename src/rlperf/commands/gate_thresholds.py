"""`rlperf gate-thresholds`: a machine's table of gate factors from its measured noise (rlperf.gate.thresholds).

    rlperf gate-thresholds --machine NAME [--results-dir results/asv]
        [--null-runs results/reports/replay/NAME/run-noise] [--known-steps results/reports/history/known-steps.json]
        [--out results/reports/gate/NAME/thresholds] [--config gate.toml] [--check]

Writes OUT/thresholds.json (what `rlperf gate` reads, path from gate.toml [gate] thresholds) and
OUT/PROVENANCE.md (this command, the rule, the table for people), and prints the Markdown table.
--check writes nothing: exit 1 when the committed table or PROVENANCE.md differs from what the results give now.
The null-runs folder defaults to results/reports/replay/<machine>/run-noise where it exists, the known-steps
file (the history's reviewed steps of the code, whose consecutive changes are left out of the spread) to
results/reports/history/known-steps.json where it exists.
Exit codes: 0 written (or up to date), 1 --check found a stale table, 2 bad input (nothing written).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rlperf.errors import UsageError


def add_parser(sub, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--machine", required=True, help="asv machine name (a folder of --results-dir)")
    p.add_argument("--results-dir", type=Path, default=Path("results/asv"), help="asv results folder")
    p.add_argument("--null-runs", type=Path,
                   help="folder of run*/results.json (default: results/reports/replay/<machine>/run-noise)")
    p.add_argument("--known-steps", type=Path,
                   help="steps of the code left out of the history's spread (default: "
                        "results/reports/history/known-steps.json)")
    p.add_argument("--out", type=Path, help="default: results/reports/gate/<machine>/thresholds")
    p.add_argument("--config", default="gate.toml", help="gate config, for the advisory ceiling shown")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the committed table is stale")


def run(args) -> int:
    from rlperf.gate.config import load_config
    from rlperf.gate.thresholds import TABLE_NAME, derive, markdown, provenance, to_json
    from rlperf.history.known_steps import DEFAULT_PATH as KNOWN_STEPS
    from rlperf.atomic import write_text

    null_runs = args.null_runs
    default_null = Path("results/reports/replay") / args.machine / "run-noise"
    if null_runs is None and default_null.is_dir():
        null_runs = default_null
    known_steps = args.known_steps
    if known_steps is None and KNOWN_STEPS.is_file():
        known_steps = KNOWN_STEPS
    out = args.out or Path("results/reports/gate") / args.machine / "thresholds"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder")
    ceiling = load_config(args.config).advisory_above
    entries = derive(args.results_dir, args.machine, null_runs, known_steps)
    command = " ".join(["rlperf gate-thresholds", f"--machine {args.machine}",
                        f"--results-dir {args.results_dir.as_posix()}"]
                       + ([f"--null-runs {null_runs.as_posix()}"] if null_runs else [])
                       + ([f"--known-steps {known_steps.as_posix()}"] if known_steps else []) + [f"--out {out.as_posix()}"])
    files = {TABLE_NAME: to_json(args.machine, entries),
             "PROVENANCE.md": provenance(args.machine, command, entries, ceiling)}
    print("\n".join(markdown(args.machine, entries, ceiling)))
    if args.check:
        stale = [name for name, text in files.items()
                 if not (out / name).is_file() or (out / name).read_text() != text]
        if stale:
            print(f"rlperf gate-thresholds: {', '.join(str(out / n) for n in stale)} stale: regenerate with "
                  f"`{command}`", file=sys.stderr)
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_text(str(out / name), text)
    return 0
