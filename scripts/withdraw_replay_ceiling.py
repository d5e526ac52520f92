"""Withdraw one wrongly measured ceiling and its floors from one run's replay results (rlperf.report.replay_withdraw).

    python scripts/withdraw_replay_ceiling.py RUN.json --ceiling d2d_Bps --reason "why" --out NEW.json

RUN.json is one `rlperf replay` run (withdraw from each part of a split sweep, then merge them); NEW.json must not
exist. Exit 2 on bad input, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlperf.commands.replay import SCHEMA, SCHEMA_VERSION
from rlperf.report.jsonio import derive_json, read_json
from rlperf.report.replay_withdraw import CEILING_KEYS, withdraw_ceiling


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--ceiling", required=True, help=f"one of {', '.join(CEILING_KEYS)}")
    ap.add_argument("--reason", required=True, help="why it is withdrawn (kept in the document)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    def withdraw() -> dict:
        run = read_json(args.run, schema=SCHEMA, versions=(SCHEMA_VERSION,))
        return withdraw_ceiling(run, args.ceiling, args.reason)

    if derive_json(args.out, withdraw, prog="withdraw_replay_ceiling") is None:
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
