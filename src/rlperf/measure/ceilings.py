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


def _copy_rate(dst: torch.Tensor, src: torch.Tensor, counted_bytes: int, timer, repeat: int, **kw) -> float:
    """Best bytes/s of `dst.copy_(src)`; the buffers die with the caller's references."""
    return _rate(counted_bytes, timer(lambda: dst.copy_(src, non_blocking=True), warmup=2, repeat=repeat, **kw))


def measure_ceilings(device: torch.device | None, *, threads: int, repeat: int = 10, nbytes: int = GIB) -> dict:
    """Bytes/s ceilings (best of `repeat` runs); device entries only when `device` is CUDA."""
    torch.set_num_threads(threads)
    n = nbytes // 4
    out = {"host_copy_Bps": _copy_rate(torch.zeros(n), torch.ones(n), 2 * nbytes, time_wall, repeat),
           "host_copy_threads": threads, "buffer_bytes": nbytes}
    if device is None or device.type != "cuda":
        return out
    out["h2d_pinned_Bps"] = _copy_rate(torch.empty(n, device=device), torch.ones(n, pin_memory=True), nbytes,
                                       time_cuda, repeat)
    out["d2d_Bps"] = _copy_rate(torch.empty(2 * n, device=device), torch.ones(2 * n, device=device), 4 * nbytes,
                                time_cuda, repeat)
    torch.cuda.empty_cache()
    return out
