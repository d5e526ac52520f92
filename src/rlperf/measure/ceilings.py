"""Physical ceilings measured on this machine, so every figure can be quoted against its limit.

A ceiling must bound what it is quoted against, so each copy has the byte count and the buffer
residency of a learner batch, not of an arbitrary large buffer:

- host_copy: a batch-sized copy with the gather's torch thread count into ONE batch-sized destination
  (reused, as the staging buffer is), reading a different slice of a source pool far larger than the
  last-level cache on every call (as the gather reads rows of a table far larger than it). A 1 GiB
  destination (the former measurement) must be written back to DRAM in full, while a gather's 116 MiB
  staging buffer can stay in a large L3: the gather then beat its "floor". Read + write bytes per second.
- h2d_pinned: a batch-sized pinned host -> device copy (CUDA events), again from a rotating pool.
- d2d: a batch-sized device -> device copy from a rotating pool larger than L2 (read + write bytes per
  second, CUDA events).

A sequential copy with the same bytes, threads and destination is at least as fast as a gather of
random rows into it, so the floor (bytes / ceiling) is a floor.

The device copies run back to back for `WARM_S` before they are timed. A batch-sized copy takes about 0.065
ms on an H200, so a dozen of them (the former warm-up and repeats together) finish before an idle GPU's
clocks have ramped up (SM 345 MHz idle on the H200 host): the 2026-12-04 sweep measured d2d at 3.22 TB/s
against 3.73-3.76 TB/s on 2026-12-03, and the fused gathers, timed later at full clocks, read 0.87-0.92 of
that "floor".
"""

from __future__ import annotations

import time

import torch

from rlperf.measure.timing import time_cuda, time_wall

GIB = 2**30
MOTION_TRACKING_BATCH_BYTES = 32_768 * 3_720  # 116.25 MiB: the default when the caller names no batch
POOL_BYTES = GIB  # source pool: several times any last-level cache or GPU L2 the suite runs on
WARM_S = 0.3  # seconds of back-to-back device copies before a device ceiling is timed (clocks ramp up)
WARM_BATCH = 20  # copies queued between synchronisations while warming (the queue never runs far ahead)


def warm_up(fn, sync, seconds: float = WARM_S, batch: int = WARM_BATCH) -> int:
    """Call `fn` in batches of `batch`, waiting (`sync`) after each, until `seconds` of wall time have passed;
    returns the calls made. Why: an idle GPU runs at a low clock and needs tens of ms of work to ramp up."""
    calls, start = 0, time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        sync()
        calls += batch
        if time.perf_counter() - start >= seconds:
            return calls


def _rate(nbytes: float, samples_ms: list[float]) -> float:
    """A ceiling is the best rate observed, so it uses the fastest sample."""
    return nbytes / (min(samples_ms) / 1e3)


def pool_slices(nbytes: int, pool_bytes: int = POOL_BYTES) -> int:
    """How many batch-sized slices the source pool holds (at least 4, so no slice is re-read while hot)."""
    return max(4, -(-pool_bytes // nbytes))


def rotating_copy(dst: torch.Tensor, pool: torch.Tensor):
    """A callable that copies the next `dst`-sized slice of `pool` into `dst` on every call."""
    n, slices = dst.numel(), pool.numel() // dst.numel()
    state = {"k": 0}

    def copy() -> None:
        k = state["k"]
        dst.copy_(pool[k * n:(k + 1) * n], non_blocking=True)
        state["k"] = (k + 1) % slices

    return copy


def _pool(n: int, slices: int, **kw) -> torch.Tensor:
    """Every page written before timing (ones, not empty), as the replay tables are."""
    return torch.ones(slices * n, **kw)


def measure_ceilings(device: torch.device | None, *, threads: int, repeat: int = 10,
                     nbytes: int = MOTION_TRACKING_BATCH_BYTES, pool_bytes: int = POOL_BYTES) -> dict:
    """Bytes/s ceilings (best of `repeat` runs) for copies of `nbytes` (the learner batch); device
    entries only when `device` is CUDA."""
    if nbytes < 4:
        raise ValueError(f"ceiling copies need at least 4 bytes, got {nbytes}")
    torch.set_num_threads(threads)
    n = nbytes // 4
    counted = 4 * n
    slices = pool_slices(counted, pool_bytes)
    pinned = device is not None and device.type == "cuda"
    dst = torch.zeros(n, pin_memory=pinned)  # the staging buffer the gather writes (pinned on a GPU host)
    out = {"host_copy_Bps": _rate(2 * counted, time_wall(rotating_copy(dst, _pool(n, slices)), warmup=2,
                                                          repeat=repeat)),
           "host_copy_threads": threads, "buffer_bytes": counted, "pool_bytes": slices * counted,
           "method": "batch-sized copies into one reused destination from a rotating source pool"}
    del dst
    if not pinned:
        return out
    dev_dst = torch.empty(n, device=device)

    def sync() -> None:
        torch.cuda.synchronize(device)

    h2d = rotating_copy(dev_dst, _pool(n, slices, pin_memory=True))
    warm_up(h2d, sync)
    out["h2d_pinned_Bps"] = _rate(counted, time_cuda(h2d, warmup=2, repeat=repeat))
    del h2d
    d2d = rotating_copy(dev_dst, _pool(n, slices, device=device))
    out["device_warm_s"] = WARM_S
    out["device_warm_calls"] = warm_up(d2d, sync)
    out["d2d_Bps"] = _rate(2 * counted, time_cuda(d2d, warmup=2, repeat=repeat))
    del d2d, dev_dst
    torch.cuda.empty_cache()
    return out
