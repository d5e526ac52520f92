"""Merge the parts of one `rlperf replay` sweep split by capacity into one results.json.

    python scripts/merge_replay_results.py PART.json PART.json [...] --out results.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlperf.commands.replay import SCHEMA, SCHEMA_VERSION
from rlperf.errors import UsageError
from rlperf.report.jsonio import read_json, write_json
from rlperf.report.replay_merge import merge_replay_docs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        if args.out.exists():
            raise UsageError(f"{args.out}: exists; not overwritten")
        docs = [read_json(p, schema=SCHEMA, versions=(SCHEMA_VERSION,)) for p in args.parts]
        merged = merge_replay_docs(docs, [p.name for p in args.parts])
    except UsageError as exc:
        print(f"merge_replay_results: {exc}", file=sys.stderr)
        return 2
    write_json(args.out, merged)
    print(f"wrote {args.out} ({len(merged['results'])} measured, {len(merged['skipped'])} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
