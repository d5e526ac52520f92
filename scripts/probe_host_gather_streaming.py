"""Streaming-store and prefetching host gathers against torch.index_select, interleaved, in one process.

    taskset -c 1 .venv/bin/python scripts/probe_host_gather_streaming.py --threads 1 --out DIR/t1-p1.json
    .venv/bin/python scripts/probe_host_gather_streaming.py --threads 2 --out DIR/t2-p1.json
    .venv/bin/python scripts/probe_host_gather_streaming.py --summarize DIR/*.json --out-md DIR/summary.md

One call is one process (run it several times: processes differ, docs/replay-host-vs-reference.md); the
logic is `rlperf.replay.gather_probe` (what is timed, how, and the tables), the kernels
`rlperf.replay.host_gather`. `--out` names a new file (an existing one is never replaced).
"""

from __future__ import annotations

import argparse
import json
import sys

from rlperf.atomic import create_json, write_text


def _commit() -> str | None:
    """The checkout's commit, with `+dirty` when tracked files differ from it (None outside git)."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, help="torch and Numba threads (e.g. the cores of the affinity mask)")
    ap.add_argument("--out", help="the JSON record of this process (a new file)")
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--width", type=int, default=930, help="fp32 words a row (930: 3,720 B, the packed row)")
    ap.add_argument("--prefetch-rows", type=int, help="rows ahead for the -prefetch variants (default: the module's)")
    ap.add_argument("--index", default="random", help="random (the sampler's), sequential (a factor) or "
                    "random-per-call (drawn inside each timed call, as a placement does)")
    ap.add_argument("--h2d", action="store_true", help="also time the H2D right after each gather, and again "
                    "(CUDA only; rlperf.replay.gather_probe)")
    ap.add_argument("--variants", help="comma-separated subset of rlperf.replay.host_gather.VARIANTS")
    ap.add_argument("--summarize", nargs="+", metavar="JSON", help="records to tabulate (no measuring)")
    ap.add_argument("--out-md", help="with --summarize: write the Markdown here instead of stdout")
    args = ap.parse_args()
    if args.summarize:
        from rlperf.replay.gather_probe import summarize

        text = summarize([json.load(open(p)) for p in args.summarize])
        if args.out_md:
            write_text(args.out_md, text + "\n")
        else:
            print(text)
        return 0
    if not args.out or not args.threads or args.threads < 1:
        ap.error("measuring needs --out FILE and --threads N >= 1 (or --summarize JSON...)")
    from rlperf.replay import host_gather
    from rlperf.replay.gather_probe import probe

    variants = args.variants.split(",") if args.variants else None
    bad = [v for v in variants or () if v not in host_gather.VARIANTS]
    if bad:
        ap.error(f"unknown variant(s) {', '.join(bad)}; valid: {', '.join(host_gather.VARIANTS)}")
    from rlperf.replay.gather_probe import INDEX_KINDS

    if args.index not in INDEX_KINDS:
        ap.error(f"unknown --index {args.index!r}; valid: {', '.join(INDEX_KINDS)}")
    from rlperf.replay.gather_probe import SAMPLE_ROWS

    if 2**args.capacity_exponent < SAMPLE_ROWS:
        ap.error(f"--capacity-exponent {args.capacity_exponent}: the table must hold the {SAMPLE_ROWS:,}-row batch "
                 f"(>= {(SAMPLE_ROWS - 1).bit_length()})")
    if args.prefetch_rows is not None and args.prefetch_rows < 1:
        ap.error("--prefetch-rows must be >= 1")
    if args.h2d:
        import torch

        if not torch.cuda.is_available():
            ap.error("--h2d times the copy to the GPU: no CUDA device is visible here")
    rec = probe(capacity_exponent=args.capacity_exponent, width=args.width, threads=args.threads,
                rounds=args.rounds, repeat=args.repeat, variants=variants, prefetch_rows=args.prefetch_rows,
                index=args.index, h2d=args.h2d)
    rec["commit"] = _commit()
    create_json(args.out, rec)
    from rlperf.replay.gather_probe import summarize

    print(summarize([rec]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
