"""Why do the fused gathers run ~10 % slow at 2^24 rows in some processes and at full speed in others? One process,
a time series (issue 23; records 2026-12-04-capacity-2p24/ and the hint A/B of 2026-12-04, where gpu-fused-bf16
at 2^24 was slow in its first round only, right after the 62 GB fp32 table of the placement before it was freed):

1. gpu-fused-bf16 at 2^24 rows, set up in a fresh process (nothing freed before it): timed for 8 s;
2. a 62 GB device allocation (the fp32 table's size) written and held: 3 s; then freed (torch empty_cache, so
   the driver gets it back): 15 s; the same once more: 10 s.

`--placement` and `--exponent` pick another fused table (gpu-fused's fp32 table at 2^24 is 62 GB), `--fresh-only` times
the fresh table only (step 1).

With `--free-first-gb N`: N GB of device memory written and freed (torch empty_cache) before the table is set up,
the order every slow case so far shares (docs/replay-bimodality.md, "2^24 rows"); the first windows then come
right after set-up. With `--host-gb N` (the sweep's second part holds 31-62 GB host tables while its GPU gathers
run): first N GB of pageable host memory written and held, then steps 1-2, then it is freed and the gather timed 8 s
more.

Each step: 0.3 s idle, then NVML (SM/memory clock, power, utilisation of the last sample period, throttle
reasons), then the median of 5 CUDA-event windows of 10 back-to-back draws (the A/B's timing). One JSON line
each, with seconds since the process started.

    python3 scripts/device/probe_capacity_transient.py --out series.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

BIG_BYTES = 62 * 10**9


def _nvml():
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)

    def read() -> dict:
        u = pynvml.nvmlDeviceGetUtilizationRates(h)
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000, "util_gpu": u.gpu, "util_mem": u.memory,
                "throttle": int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h))}

    return read


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--exponent", type=int, default=24)
    ap.add_argument("--placement", default="gpu-fused-bf16", help="a fused placement of kernel_probe.PLACEMENTS")
    ap.add_argument("--fresh-only", action="store_true", help="time the fresh table only (no 62 GB steps)")
    ap.add_argument("--host-gb", type=int, default=0, help="GB of host memory written and held first")
    ap.add_argument("--free-first-gb", type=int, default=0,
                    help="GB of device memory written and freed before the table is set up")
    args = ap.parse_args()
    import torch

    from rlperf.measure.timing import time_cuda
    from rlperf.replay import kernel_probe

    t0 = time.perf_counter()
    read = _nvml()
    out = open(args.out, "w")

    def note(phase: str, **extra) -> None:
        out.write(json.dumps({"phase": phase, "t": round(time.perf_counter() - t0, 3), **read(), **extra}) + "\n")
        out.flush()

    def series(phase: str, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            time.sleep(0.3)
            idle = read()
            s = time_cuda(call, warmup=1, repeat=5, stream=pl.stream, inner=10, run_ahead=True)
            note(phase, ms=statistics.median(s), idle={k: idle[k] for k in ("util_mem", "power_w")})

    note("start")
    host = None
    if args.host_gb:
        host = torch.empty(args.host_gb * 10**9, dtype=torch.uint8)
        host.fill_(1)
        note(f"host {args.host_gb} GB written")
    if args.free_first_gb:
        first = torch.empty(args.free_first_gb * 10**9, dtype=torch.uint8, device="cuda")
        first.fill_(1)
        torch.cuda.synchronize()
        del first
        torch.cuda.empty_cache()
        note(f"device {args.free_first_gb} GB written and freed")
    pl = kernel_probe.build(kernel_probe.check_placements([args.placement])[0], args.exponent)
    note("built", placement=args.placement, exponent=args.exponent,
         table_bytes=pl.table.numel() * pl.table.element_size(), table_ptr=pl.table.data_ptr(),
         table_mod_2MiB=pl.table.data_ptr() % (2 << 20), out_ptr=pl.out.data_ptr())
    call = kernel_probe.launcher(pl, kernel_probe.Variant(args.placement))
    series("fresh", 8)
    for k in () if args.fresh_only else (1, 2):
        big = torch.empty(BIG_BYTES, dtype=torch.uint8, device="cuda")
        big.fill_(1)
        torch.cuda.synchronize()
        note(f"big{k} written")
        series(f"big{k} held", 3)
        del big
        torch.cuda.empty_cache()
        torch.cuda.synchronize()
        note(f"big{k} freed")
        series(f"after free {k}", 15 if k == 1 else 10)
    if host is not None:
        del host
        note("host memory freed")
        series("host freed", 8)
    out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
