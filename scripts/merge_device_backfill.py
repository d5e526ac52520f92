"""Merge a device backfill's scratch results into a results folder with the store, fingerprints included.

    .venv/bin/python scripts/merge_device_backfill.py MACHINE SCRATCH_ASV BACKFILL_JSONL [--results-dir results/asv]

The device writes `rlperf backfill` results into a scratch folder (scripts/device/gpu_history.sh) that
comes back as a tarball; this publishes the commits its log says were stored (asvtools.store.publish:
under the folder's lock, point by point, never overwriting a point it did not measure) and copies each
one's host fingerprint, so nothing under results/ is edited by hand.
"""

from __future__ import annotations

import argparse
import json
import sys

from rlperf.asvtools import fingerprint, store


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("machine")
    p.add_argument("scratch", help="the device's asv results folder")
    p.add_argument("log", help="the backfill's JSON lines (one per commit)")
    p.add_argument("--results-dir", default="results/asv")
    args = p.parse_args(argv)
    with open(args.log) as fh:
        shas = [r["sha"] for r in map(json.loads, fh) if r["outcome"].startswith("stored")]
    missing = [s[:8] for s in shas if fingerprint.load(args.scratch, args.machine, s) is None]
    if missing:
        print(f"no fingerprint in {args.scratch} for {', '.join(missing)}: nothing merged", file=sys.stderr)
        return 5
    store.publish(args.results_dir, args.machine, args.scratch, shas, metas=[], echo=print)
    for sha in shas:
        fingerprint.store(args.results_dir, args.machine, sha, fingerprint.load(args.scratch, args.machine, sha))
    print(f"merged {len(shas)} commits: {' '.join(s[:8] for s in shas)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
