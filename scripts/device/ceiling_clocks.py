"""Is a device ceiling measured at an idle GPU's clocks? One fresh process, into a JSON line on stdout.

Times the batch-sized device copy (`measure.ceilings.rotating_copy`) as the ceilings did before the warm-up
(2 warm-up calls, 10 timed, best rate), reading the SM clock (NVML) before and after; then after
`measure.ceilings.warm_up`; then `measure_ceilings` as it is now. Run it in a few fresh processes with the GPU
idle in between: `python3 scripts/device/ceiling_clocks.py` (CUDA and pynvml needed).
"""

from __future__ import annotations

import json
import time

import torch

from rlperf.measure.ceilings import MOTION_TRACKING_BATCH_BYTES, measure_ceilings, pool_slices, rotating_copy
from rlperf.measure.timing import time_cuda


def warm_up(fn, sync, seconds: float = 0.3, batch: int = 20) -> int:
    """Call `fn` in batches of `batch`, waiting (`sync`) after each, until `seconds` have passed; the calls made.
    (In rlperf.measure.ceilings when this script first ran; moved here when the check showed the clocks were
    already up and measure_ceilings stopped warming.)"""
    calls, start = 0, time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        sync()
        calls += batch
        if time.perf_counter() - start >= seconds:
            return calls


def _sm_mhz() -> int | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)
    except Exception:  # noqa: BLE001 - a missing NVML leaves the clock unknown, never stops the measurement
        return None


def main() -> None:
    dev = torch.device("cuda", 0)
    n = MOTION_TRACKING_BATCH_BYTES // 4
    pool = torch.ones(pool_slices(4 * n) * n, device=dev)
    dst = torch.empty(n, device=dev)
    copy = rotating_copy(dst, pool)
    torch.cuda.synchronize(dev)
    rec = {"sm_mhz_idle": _sm_mhz()}
    best = min(time_cuda(copy, warmup=2, repeat=10))
    rec.update(cold_d2d_Bps=2 * 4 * n / (best / 1e3), sm_mhz_after_cold=_sm_mhz())
    t = time.perf_counter()
    rec["warm_calls"] = warm_up(copy, lambda: torch.cuda.synchronize(dev))
    rec["warm_s"] = time.perf_counter() - t
    best = min(time_cuda(copy, warmup=2, repeat=10))
    rec.update(warm_d2d_Bps=2 * 4 * n / (best / 1e3), sm_mhz_after_warm=_sm_mhz())
    del pool, dst, copy
    torch.cuda.empty_cache()
    now = measure_ceilings(dev, threads=torch.get_num_threads())
    rec.update(measure_ceilings_d2d_Bps=now["d2d_Bps"], measure_ceilings_h2d_Bps=now["h2d_pinned_Bps"],
               measure_ceilings_d2d_Bps_per_allocation=now.get("d2d_Bps_per_allocation"))
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
