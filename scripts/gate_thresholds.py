"""Generate a machine's thresholds table (rlperf.gate.thresholds) from its stored history and null runs.

    python scripts/gate_thresholds.py --machine NAME [--results-dir results/asv]
        [--null-runs results/reports/replay/NAME/run-noise] [--out results/reports/gate/NAME/thresholds]
        [--config gate.toml] [--check]

Writes OUT/thresholds.json (what `rlperf gate` reads, path from gate.toml [gate] thresholds) and
OUT/PROVENANCE.md (this command, the rule, the table for people), and prints the Markdown table.
--check writes nothing: exit 1 when the committed table differs from what the results give now.
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
from rlperf.gate.thresholds import MIN_CHANGES, MIN_RUNS, TABLE_NAME, Z_ONE_PERCENT, derive, markdown, to_json


def provenance(machine: str, command: str, entries, ceiling: float) -> str:
    return "\n".join([
        f"# Gate thresholds of `{machine}`: factors from measured noise", "",
        "Generated, never typed by hand, by:", "", f"    {command}", "",
        f"Rule (docs/gate.md, Thresholds from data): factor = exp({Z_ONE_PERCENT} x sigma), a one-sided 1 % "
        "false-alarm band for one comparison of two measurements; sigma is 1.4826 x the median absolute "
        "deviation of the log-changes between consecutive commits of each host series (history, pooled over "
        "the machine's hosts, a host change never counted), or sqrt(2) x the CV of fresh-process null runs; "
        f"the wider one stands. Fewer than {MIN_CHANGES} changes or {MIN_RUNS} runs: no factor, the gate falls "
        f"back to gate.toml. The last column applies gate.toml's advisory_above (×{ceiling:g} when generated); "
        "the gate applies the ceiling of the gate.toml it reads.", "",
        *markdown(machine, entries, ceiling), ""])


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
    table = to_json(args.machine, entries)
    print("\n".join(markdown(args.machine, entries, ceiling)))
    if args.check:
        current = out / TABLE_NAME
        if not current.is_file() or current.read_text() != table:
            print(f"gate_thresholds: {current} is stale: regenerate with `{command}`", file=sys.stderr)
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(str(out / TABLE_NAME), table)
    write_text_atomic(str(out / "PROVENANCE.md"), provenance(args.machine, command, entries, ceiling))
    return 0


if __name__ == "__main__":
    sys.exit(main())
