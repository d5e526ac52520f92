"""Time replay placements against one of them interleaved, round by round, in one process (issue 23 §3).

    python3 scripts/device/probe_interleaved.py --out inter-1.json [--placements host,host-numba]
        [--against reference-host] [--capacity-exponent 20] [--rounds 12] [--repeat 10]
    python3 scripts/device/probe_interleaved.py --summarize inter-*.json [--out-md inter.md]

One call is one process; run it in several fresh processes (a process runs at its own speed on the H200 host). The
logic: `rlperf.replay.interleave_probe`. `--out` names a new file: an existing one is never replaced, and it is
checked before anything is measured.
"""

from __future__ import annotations

import argparse
import sys

from rlperf.atomic import create_json
from rlperf.commands.probe_records import add_record_args, check_new_out, summarized
from rlperf.errors import UsageError


def main() -> int:
    from rlperf.replay import interleave_probe

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--placements", default="host,host-numba", help="comma-separated single-GPU placements")
    ap.add_argument("--against", default="reference-host", help="the placement every ratio is taken to")
    ap.add_argument("--metrics", help=f"comma-separated (default: {', '.join(interleave_probe.METRICS)})")
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--threads", type=int, help="torch threads (default: the usable cores, as rlperf replay)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=10)
    add_record_args(ap)
    args = ap.parse_args()
    if summarized(args, interleave_probe.summarize):
        return 0
    check_new_out(ap, args)
    if args.rounds < 1 or args.repeat < 1 or (args.threads is not None and args.threads < 1):
        ap.error("--rounds, --repeat and --threads must be >= 1")
    try:
        rec = interleave_probe.probe(args.placements.split(","), against=args.against,
                                     capacity_exponent=args.capacity_exponent, threads=args.threads,
                                     rounds=args.rounds, repeat=args.repeat,
                                     metrics=args.metrics.split(",") if args.metrics else None)
    except (UsageError, ValueError) as e:  # names, metrics, table size: checked before measuring, choices named
        ap.error(str(e))
    create_json(args.out, rec)
    print(interleave_probe.summarize([rec]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
