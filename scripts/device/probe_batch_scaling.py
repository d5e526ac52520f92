"""The fused gathers and a device copy of the same bytes over batch sizes: a rate and a fixed cost each (issue 23).

    python3 scripts/device/probe_batch_scaling.py --out scaling-1.json [--placements gpu-fused,gpu-fused-bf16]
    python3 scripts/device/probe_batch_scaling.py --summarize scaling-*.json [--out-md scaling.md]

One call is one process. What is timed, how, and the fitted line: `rlperf.replay.scaling_probe`. `--out` names a new
file: an existing one is never replaced, and it is checked before anything is measured.
"""

from __future__ import annotations

import argparse
import sys

from rlperf.atomic import create_json
from rlperf.commands.probe_records import add_record_args, check_new_out, summarized


def main() -> int:
    from rlperf.errors import UsageError
    from rlperf.replay import scaling_probe

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--placements", default=",".join(scaling_probe.PLACEMENTS),
                    help="comma-separated subset of " + ", ".join(scaling_probe.PLACEMENTS))
    ap.add_argument("--sizes", default=",".join(map(str, scaling_probe.SIZES)), help="batch rows, increasing")
    ap.add_argument("--exponent", type=int, default=20, help="table rows, as a power of two")
    ap.add_argument("--rounds", type=int, default=5)
    add_record_args(ap)
    args = ap.parse_args()
    if summarized(args, scaling_probe.summarize):
        return 0
    check_new_out(ap, args)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    try:
        sizes = [int(x) for x in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    try:
        rec = scaling_probe.probe(args.placements.split(","), sizes, exponent=args.exponent, rounds=args.rounds)
    except UsageError as e:  # placements, sizes, no CUDA: checked before anything is built
        ap.error(str(e))
    create_json(args.out, rec)
    print(scaling_probe.summarize([rec]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
