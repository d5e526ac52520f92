"""Merge the parts of one `rlperf replay` sweep split by capacity into one results.json.

    python scripts/merge_replay_results.py PART.json PART.json [...] --out results.json [--replace REASON]
        [--take PLACEMENT,...]

With --replace, a later part may measure points an earlier one holds (placements whose code changed): its points
replace those, which the merged document keeps under `replaced` with REASON. With --take, only those placements'
points come from the parts after the first (the merged document's `parts` says so).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlperf.commands.replay import SCHEMA, SCHEMA_VERSION
from rlperf.report.jsonio import derive_json, read_json
from rlperf.report.replay_merge import merge_replay_docs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--replace", metavar="REASON", help="let later parts replace earlier points, saying why")
    ap.add_argument("--take", metavar="PLACEMENTS", help="comma-separated: only these from the parts after the first")
    args = ap.parse_args(argv)

    def merge() -> dict:
        docs = [read_json(p, schema=SCHEMA, versions=(SCHEMA_VERSION,)) for p in args.parts]
        return merge_replay_docs(docs, [p.name for p in args.parts], replace_reason=args.replace,
                                 take=args.take.split(",") if args.take else None)

    merged = derive_json(args.out, merge, prog="merge_replay_results")
    if merged is None:
        return 2
    print(f"wrote {args.out} ({len(merged['results'])} measured, {len(merged['skipped'])} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
