"""Raise one ceiling of one run's replay results to what another part of the same sweep measured, and recompute
the floors on it (rlperf.report.replay_withdraw.raise_ceiling).

    python scripts/raise_replay_ceiling.py RUN.json --ceiling d2d_Bps --from OTHER.json --reason "why" --out NEW.json

RUN.json and OTHER.json are runs of one split sweep on one machine (raise in the parts, then merge them); NEW.json
must not exist. Exit 2 on bad input (another machine, a value not above this run's, a floor still beaten), nothing
written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlperf.commands.replay import SCHEMA, SCHEMA_VERSION
from rlperf.report.jsonio import derive_json, read_json
from rlperf.report.replay_withdraw import CEILING_KEYS, raise_ceiling_from


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--ceiling", required=True, help=f"one of {', '.join(CEILING_KEYS)}")
    ap.add_argument("--from", dest="source", type=Path, required=True,
                    help="the run (a part of the same sweep) whose measured ceiling replaces this run's")
    ap.add_argument("--reason", required=True, help="why it is raised (kept in the document)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    def raised() -> dict:
        run = read_json(args.run, schema=SCHEMA, versions=(SCHEMA_VERSION,))
        other = read_json(args.source, schema=SCHEMA, versions=(SCHEMA_VERSION,))
        return raise_ceiling_from(run, other, args.ceiling, args.source.name, args.reason)

    if derive_json(args.out, raised, prog="raise_replay_ceiling") is None:
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
