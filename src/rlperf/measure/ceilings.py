"""Physical ceilings measured on this machine, so every figure can be quoted against its limit.

- host_copy: multi-threaded torch copy of a 1 GiB host buffer (read + write bytes per second);
- h2d_pinned: a 1 GiB pinned host -> device copy (CUDA events);
- d2d: a 2 GiB device -> device copy (read + write bytes per second, CUDA events).
"""

from __future__ import annotations

import torch

from rlperf.measure.timing import time_cuda, time_wall

GIB = 2**30


def _rate(nbytes: float, samples_ms: list[float]) -> float:
    """A ceiling is the best rate observed, so it uses the fastest sample."""
    return nbytes / (min(samples_ms) / 1e3)


def measure_ceilings(device: torch.device | None, *, threads: int, repeat: int = 10, nbytes: int = GIB) -> dict:
    """Bytes/s ceilings (best of `repeat` runs); device entries only when `device` is CUDA."""
    torch.set_num_threads(threads)
    src = torch.ones(nbytes // 4, dtype=torch.float32)
    dst = torch.empty_like(src).fill_(0)
    out = {"host_copy_Bps": _rate(2 * nbytes, time_wall(lambda: dst.copy_(src), warmup=2, repeat=repeat)),
           "host_copy_threads": threads, "buffer_bytes": nbytes}
    del src, dst
    if device is None or device.type != "cuda":
        return out
    pinned = torch.ones(nbytes // 4, dtype=torch.float32, pin_memory=True)
    dev = torch.empty_like(pinned, device=device)
    out["h2d_pinned_Bps"] = _rate(nbytes, time_cuda(lambda: dev.copy_(pinned, non_blocking=True),
                                                 warmup=2, repeat=repeat))
    del pinned
    a = torch.ones(nbytes // 2, dtype=torch.float32, device=device)
    b = torch.empty_like(a)
    out["d2d_Bps"] = _rate(2 * a.numel() * 4, time_cuda(lambda: b.copy_(a), warmup=2, repeat=repeat))
    del a, b, dev
    torch.cuda.empty_cache()
    return out
