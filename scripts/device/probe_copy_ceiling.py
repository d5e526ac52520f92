"""Is the device-copy ceiling the machine's or the timing's? One process, interleaved rounds (issue 23).

`rlperf.measure.ceilings` times one torch `copy_` of a batch per CUDA-event window, launched while the stream is
idle, so each window also holds the host's launch latency; the gathers it is quoted against are timed as 10
back-to-back launches queued behind a GPU spin (device time only). This probe times, on each of
`ceilings.DEVICE_ALLOCATIONS` pool + destination pairs, in `--rounds` rounds that interleave the methods:

- `copy_ once`: the ceiling's method (inner 1, no hold);
- `copy_ held`: the same copy timed as the gathers are (inner 10, run-ahead hold);
- `sm-uN held`: `measure.sm_copy` (each thread N 16-byte loads, then N stores), timed as the gathers are;
- `gpu-fused`, `gpu-fused-bf16` at 2^20 rows: the fused gathers' default launches, timed as in `rlperf replay`;
- `h2d once` / `h2d held`: the pinned H2D ceiling's copy, both ways.

Rates are read + write bytes per second (H2D: bytes). One JSON line per (method, allocation, round): min and median
ms of `--repeat` windows; then a markdown summary on stdout.

    python3 scripts/device/probe_copy_ceiling.py --out copy.jsonl > copy.md
"""

from __future__ import annotations

import argparse
import json
import statistics


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    import torch

    from rlperf.measure import ceilings
    from rlperf.measure.sm_copy import UNROLLS, sm_copy
    from rlperf.measure.timing import time_cuda
    from rlperf.replay import kernel_probe

    dev = torch.device("cuda", 0)
    nbytes = ceilings.MOTION_TRACKING_BATCH_BYTES
    n = nbytes // 4
    slices = ceilings.pool_slices(nbytes)
    stream = torch.cuda.Stream(dev)
    pairs = [(torch.empty(n, device=dev), torch.ones(slices * n, device=dev))
             for _ in range(ceilings.DEVICE_ALLOCATIONS)]
    for dst, pool in pairs:  # the SM copy writes what copy_ writes
        sm_copy(dst, pool[:n], stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        if not torch.equal(dst, pool[:n]):
            raise SystemExit("sm_copy wrote other bytes than its source")
    h2d_dst = torch.empty(n, device=dev)
    h2d_pool = torch.ones(slices * n, pin_memory=True)
    gathers = {p: kernel_probe.build(p, 20) for p in ("gpu-fused", "gpu-fused-bf16")}

    methods = []  # (name, allocation, call, stream, bytes counted, inner, run_ahead)
    for a, (dst, pool) in enumerate(pairs):
        methods.append(("copy_ once", a, ceilings.rotating_copy(dst, pool), None, 2 * nbytes, 1, False))
        methods.append(("copy_ held", a, ceilings.rotating_copy(dst, pool), None, 2 * nbytes, 10, True))
        for u in UNROLLS:
            def sm(src, dst=dst, u=u):
                sm_copy(dst, src, unroll=u, stream=stream)

            methods.append((f"sm-u{u} held", a, ceilings.rotating(n, pool, sm), stream, 2 * nbytes, 10, True))

    methods.append(("h2d once", 0, ceilings.rotating_copy(h2d_dst, h2d_pool), None, nbytes, 1, False))
    methods.append(("h2d held", 0, ceilings.rotating_copy(h2d_dst, h2d_pool), None, nbytes, 10, True))
    for p, pl in gathers.items():
        moved = 2 * pl.sample_rows * pl.layout.batch_row_bytes
        call = kernel_probe.launcher(pl, kernel_probe.Variant(p))
        methods.append((p, 0, call, pl.stream, moved, 10, True))

    rows = {}
    with open(args.out, "w") as out:
        for r in range(args.rounds):
            for name, a, call, st, moved, inner, ahead in methods:
                s = time_cuda(call, warmup=2, repeat=args.repeat, stream=st, inner=inner, run_ahead=ahead)
                rec = {"method": name, "allocation": a, "round": r, "bytes": moved, "inner": inner,
                       "run_ahead": ahead, "min_ms": min(s), "median_ms": statistics.median(s)}
                out.write(json.dumps(rec) + "\n")
                rows.setdefault(name, []).append(rec)
    print("| method | best TB/s | median of medians TB/s | best allocation's median TB/s | worst allocation's median |")
    print("|---|---:|---:|---:|---:|")
    for name, recs in rows.items():
        moved = recs[0]["bytes"]
        best = moved / min(x["min_ms"] for x in recs) / 1e9
        med = moved / statistics.median(x["median_ms"] for x in recs) / 1e9
        per_alloc = {}
        for x in recs:
            per_alloc.setdefault(x["allocation"], []).append(x["median_ms"])
        alloc = [moved / statistics.median(v) / 1e9 for v in per_alloc.values()]
        print(f"| {name} | {best:.3f} | {med:.3f} | {max(alloc):.3f} | {min(alloc):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
