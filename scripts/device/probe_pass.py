"""Split a replay placement's synchronised pass into its parts, interleaved with the parts timed alone (issue 23).

    python3 scripts/device/probe_pass.py --out pass-1.json [--placement host] [--capacity-exponent 20]
    python3 scripts/device/probe_pass.py --summarize pass-*.json [--out-md pass.md]

One call is one process; run it several times (a process runs at its own speed on the H200 host). The logic and
what each mode means: `rlperf.replay.pass_probe`. Without CUDA only the CPU modes run (the idle-workers question).
`--out` names a new file: an existing one is never replaced, and it is checked before anything is measured.
"""

from __future__ import annotations

import argparse
import sys

from rlperf.atomic import create_json
from rlperf.commands.probe_records import add_record_args, check_new_out, summarized


def main() -> int:
    from rlperf.replay import pass_probe

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    families = pass_probe.family_placements()
    ap.add_argument("--placement", default="host",
                    help="; ".join(f"{f}: {', '.join(names)}" for f, names in families.items()))
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--threads", type=int, help="torch threads (default: the usable cores, as rlperf replay)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--gap-ms", type=float, help="the idle gap of the -after- modes (default: the H2D measured here)")
    ap.add_argument("--modes", help=f"comma-separated; host: {', '.join(pass_probe.HOST_MODES)}; zero-copy: "
                    f"{', '.join(pass_probe.ZERO_COPY_MODES)} (default: all the placement's family runs here)")
    add_record_args(ap)
    args = ap.parse_args()
    if summarized(args, pass_probe.summarize):
        return 0
    check_new_out(ap, args)
    modes = args.modes.split(",") if args.modes else None
    if args.rounds < 1 or args.repeat < 1 or (args.threads is not None and args.threads < 1):
        ap.error("--rounds, --repeat and --threads must be >= 1")
    try:
        rec = pass_probe.probe(args.placement, capacity_exponent=args.capacity_exponent, threads=args.threads,
                               rounds=args.rounds, repeat=args.repeat, gap_ms=args.gap_ms, modes=modes)
    except ValueError as e:  # placement, modes, table size, CUDA: checked before measuring, valid choices named
        ap.error(str(e))
    create_json(args.out, rec)
    print(pass_probe.summarize([rec]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
