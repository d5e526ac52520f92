"""Why does one process time a GPU gather at one speed and the next at another? Correlate, per process.

    python3 scripts/device/probe_gpu_gather.py --procs 8 --out probe.jsonl [--capacity-exponent 20]

Launches `--procs` fresh processes one after another; each sets up every GPU gather placement at 2^N rows
in the order `rlperf replay` runs them and writes one JSON line per placement with the candidate factors:

- `rlperf_ms`: median of `placement.measure(gpu_sample_wall)` as the code under test has it;
- `free_ms`: median of 10 back-to-back draws per event window, launched by the host as they come (the
  timing of main at bbdcc49); `held_ms`: the same window queued behind a 10 ms GPU spin, so it holds device
  work only; `issue_ms`: host time to queue one draw while the GPU is held (its Python + launch cost);
  `syncs`: host-synchronising calls in one draw (torch's sync debug mode);
- `verified`: whether the first batch held the rows its indices name; `table_bad_rows`/`_span`: table rows
  whose id word is not their own index (checked after the verify and before timing);
- `table_ptr`, `out_ptr`, `idx_ptr` and their offsets in a 2 MiB page; the SM/memory clocks (NVML) right
  after timing; the CPU the process ran on.

Only APIs that main at bbdcc49 has too are used, so PYTHONPATH can point it at either tree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

PLACEMENTS = ("gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded", "gpu-bf16", "gpu-fused-bf16", "gpu-compact")
HOLD_CYCLES = 20_000_000  # ~10 ms at 1.98 GHz: longer than the host needs to queue 10 draws
MIB2 = 2 << 20


def _window(fn, stream, *, inner: int, hold: bool, warmup: int = 5, repeat: int = 20) -> list[float]:
    import torch

    out = []
    with torch.cuda.stream(stream):
        for i in range(warmup + repeat):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if hold:
                torch.cuda._sleep(HOLD_CYCLES)
            a.record(stream)
            for _ in range(inner):
                fn()
            b.record(stream)
            b.synchronize()
            if i >= warmup:
                out.append(a.elapsed_time(b) / inner)
    return out


def _issue_ms(fn, stream, calls: int = 10) -> float:
    """Host ms to queue one draw while the stream is held (a syncing draw waits out the hold)."""
    import torch

    with torch.cuda.stream(stream):
        torch.cuda._sleep(HOLD_CYCLES)
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        dt = (time.perf_counter() - t0) / calls * 1e3
    torch.cuda.synchronize()
    return dt


def _syncs(fn, stream) -> int:
    import torch

    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught, torch.cuda.stream(stream):
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode(1)
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    return sum("synchroniz" in str(w.message).lower() for w in caught)


def _clocks() -> dict:
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "throttle": int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h))}
    except Exception as exc:  # NVML missing is a missing column, not a failed probe
        return {"clocks_error": repr(exc)}


def child(proc: int, exponent: int, placements: list[str]) -> None:
    import torch

    from rlperf.replay.cases import ReplayCase
    from rlperf.replay.metrics import GPU_SAMPLE
    from rlperf.replay.build import build_placement
    from rlperf.replay.run import learner_device
    from rlperf.replay.tables import release_tables

    for name in placements:
        case = ReplayCase("g1_motion_tracking", "motrix", name, 2**exponent)
        pl = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(),
                             threads=os.cpu_count() or 1, seed=0)
        pl.setup()
        try:
            pl.verify()
            verified = True
        except AssertionError:  # a wrong batch is recorded, and the timing factors still measured
            verified = False
        stream = pl.stream
        rec = {"proc": proc, "placement": name, "capacity_rows": 2**exponent, "pid": os.getpid(), "verified": verified,
               "cpu": int(open("/proc/self/stat").read().split()[38]),
               "table_ptr": pl.table.data_ptr(), "out_ptr": pl.out.data_ptr(), "idx_ptr": pl.idx.data_ptr()}
        ids = pl.table.view(torch.int32)[:, 0].long() - torch.arange(pl.capacity_rows, device=pl.table.device)
        bad = torch.nonzero(ids).flatten()
        rec["table_bad_rows"] = int(bad.numel())  # rows whose id word is not their index (written by whom?)
        rec["table_bad_span"] = [int(bad.min()), int(bad.max())] if bad.numel() else None
        for k in ("table_ptr", "out_ptr", "idx_ptr"):
            rec[k.replace("_ptr", "_mod_2MiB")] = rec[k] % MIB2
        rec["rlperf_ms"] = statistics.median(pl.measure(GPU_SAMPLE, warmup=5, repeat=20))
        rec["free_ms"] = statistics.median(_window(pl.gpu_sample, stream, inner=10, hold=False))
        rec["held_ms"] = statistics.median(_window(pl.gpu_sample, stream, inner=10, hold=True))
        rec["issue_ms"] = _issue_ms(pl.gpu_sample, stream)
        rec["syncs"] = _syncs(pl.gpu_sample, stream)
        rec.update(_clocks())
        print(json.dumps(rec), flush=True)
        del pl, stream
        release_tables()
    torch.cuda.synchronize()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--placements", default=",".join(PLACEMENTS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    placements = args.placements.split(",")
    if args.child is not None:
        child(args.child, args.capacity_exponent, placements)
        return 0
    with open(args.out, "w") as f:
        for k in range(args.procs):
            cmd = [sys.executable, __file__, "--child", str(k), "--capacity-exponent", str(args.capacity_exponent),
                   "--placements", args.placements, "--out", args.out]
            res = subprocess.run(cmd, capture_output=True, text=True)
            f.write(res.stdout)
            f.flush()
            if res.returncode:
                print(res.stderr[-3000:], file=sys.stderr)
                return res.returncode
    summarize(args.out)
    return 0


def summarize(path: str) -> None:
    """Per placement: each metric's per-process medians, min..max and max/min (the spread to explain)."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for name in dict.fromkeys(r["placement"] for r in rows):
        mine = [r for r in rows if r["placement"] == name]
        parts = []
        for key in ("rlperf_ms", "free_ms", "held_ms", "issue_ms"):
            v = [r[key] for r in mine]
            parts.append(f"{key} {min(v):.4f}..{max(v):.4f} (x{max(v) / min(v):.2f})")
        bad = sum(not r.get("verified", True) for r in mine)
        print(f"{name:17s} n={len(mine)} wrong_batches={bad} syncs={mine[0]['syncs']} " + "  ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
