"""Stamp the `cpu_flags` host facet into stored asv results that predate it (rlperf.asvtools.host_facet).

    python scripts/stamp_host_facet.py [--results-dir results/asv] [--dry-run] MACHINE [MACHINE ...]

Prints one line per file: the value now in its params and where it came from. Exit 2 on bad
arguments, 5 when a file cannot be read or rewritten in its own layout (nothing is half-written).
"""

import argparse
import os
import sys

from rlperf.asvtools.host_facet import stamp_machine
from rlperf.gate.exitcodes import InfrastructureError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("machines", nargs="+", metavar="MACHINE")
    parser.add_argument("--results-dir", default="results/asv")
    parser.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    args = parser.parse_args(argv)
    missing = [m for m in args.machines if not os.path.isdir(os.path.join(args.results_dir, m))]
    if missing:
        known = sorted(d for d in os.listdir(args.results_dir) if os.path.isdir(os.path.join(args.results_dir, d))) \
            if os.path.isdir(args.results_dir) else []
        print(f"stamp_host_facet: no results for {', '.join(missing)} under {args.results_dir}; "
              f"machines there: {', '.join(known) or 'none'}", file=sys.stderr)
        return 2
    try:
        for machine in args.machines:
            for stamp in stamp_machine(args.results_dir, machine, write=not args.dry_run):
                print(f"{os.path.relpath(stamp.path, args.results_dir)}\tcpu_flags={stamp.value}\t({stamp.source})")
    except InfrastructureError as exc:
        print(f"stamp_host_facet: {exc}", file=sys.stderr)
        return 5
    return 0


if __name__ == "__main__":
    sys.exit(main())
