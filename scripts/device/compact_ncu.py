"""Launch the fused gathers for Nsight Compute, or time their launch variants with CUDA events (issue 23 §2).

    python3 scripts/device/compact_ncu.py profile [--placements P,..] [--warmup 5] [--launches 3] [--alternatives]
    python3 scripts/device/compact_ncu.py ab --out ab.jsonl [--placements P,..] [--rounds 3]

`profile` is meant to run under `ncu --profile-from-start off`: only the launches after each placement's
warm-up are profiled (with `--alternatives`, each kernel's alternative after it: the compact kernel's old
byte-by-byte plan, the int4 loads of the fp32 one; and the compact kernel over compact-a16 rows, `layout=a16`). `ab` writes one JSON line per variant and prints the table.
The work is in `rlperf.replay.kernel_probe`; `scripts/ncu_table.py` turns either output into Markdown.
"""

from __future__ import annotations

import argparse
import json
import sys

from rlperf.atomic import write_text
from rlperf.errors import EXIT_USAGE, UsageError
from rlperf.replay import kernel_probe


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("profile", "ab"))
    ap.add_argument("--placements", default=",".join(kernel_probe.PLACEMENTS))
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="ab: the JSON lines file to write")
    ap.add_argument("--alternatives", action="store_true",
                    help="profile: each kernel's alternative (and other layout) as well")
    args = ap.parse_args(argv)
    try:
        names = kernel_probe.check_placements(args.placements.split(","))
        if args.mode == "ab" and not args.out:
            raise UsageError("ab needs --out FILE (one JSON line per variant)")
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from rlperf.replay.tables import release_tables

    rows = []
    for name in names:
        pl = kernel_probe.build(name, args.capacity_exponent)
        if args.mode == "profile":
            kernel_probe.profile(pl, placement=name, warmup=args.warmup, launches=args.launches,
                                 alternatives=args.alternatives)
            print(f"{name}: kernel {pl.launched}, {args.launches} launches profiled", flush=True)
        else:  # the file holds every placement done so far, so a timeout keeps them
            rows += kernel_probe.ab_timings(pl, name, rounds=args.rounds)
            write_text(args.out, "".join(json.dumps(r) + "\n" for r in rows))
        del pl
        release_tables()
    if args.mode == "ab":
        from rlperf.report.ncu_table import ab_markdown  # after the rows are safe: tabulate may be missing there

        print("\n".join(ab_markdown(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
