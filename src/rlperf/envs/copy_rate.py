"""Host memory copy rate at a given Numba thread count: the ceiling an env kernel's floor is quoted on.

Why a Numba copy and not the replay suite's torch copy: the floor of a kernel running on k threads is
what k threads can stream, so the rate is measured with the kernel's own pool, mask and chunking, at
the kernel's thread count, in the same run (issue 9: the ceiling's thread count must be the kernel's).

Why the copy has the kernel's footprint: the kernel is timed in repeated calls on the same inputs, so
when its bytes fit the last-level cache it streams from cache. A copy of a fixed 256 MiB streamed from
DRAM and the H200 host's walk and probe kernels at 32,768 envs (55 MB) "beat" that floor (x 0.8). The
copy now moves as many bytes as the kernel touches (half read, half written) through a buffer of the
same total size, repeated the same way, so both sit in the same level of the memory hierarchy.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from rlperf.envs.base import NCHUNKS

BUFFER_BYTES = 256 * 2**20  # well above the last-level cache of the hosts measured


@njit(parallel=True, cache=True, nogil=True)
def _chunked_copy(dst, src, nchunks):
    n = src.shape[0]
    chunk = (n + nchunks - 1) // nchunks
    for c in prange(nchunks):
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            dst[i] = src[i]


def copy_bytes_for(touched_bytes: int) -> int:
    """Source size of the copy whose traffic (read + write) and footprint equal `touched_bytes`."""
    return max(4 * NCHUNKS, (touched_bytes // 2) // 4 * 4)


def repeats_for(nbytes: int, base: int = 5, most: int = 50) -> int:
    """Small copies take more samples (a cache-sized copy lasts microseconds), up to `most`."""
    return max(base, min(most, base * BUFFER_BYTES // max(nbytes, 1)))


def host_copy_rate(threads: int, *, nbytes: int = BUFFER_BYTES, repeat: int = 5) -> dict:
    """Best read + write bytes/s of a `threads`-thread copy of `nbytes` (pages touched before timing)."""
    from rlperf.envs.threads import apply_budget
    from rlperf.measure.timing import time_wall

    src = np.ones(nbytes // 4, dtype=np.float32)
    dst = np.zeros_like(src)
    apply_budget(threads)
    samples = time_wall(lambda: _chunked_copy(dst, src, NCHUNKS), warmup=1, repeat=repeat)
    return {"host_copy_Bps": 2 * nbytes / (min(samples) / 1e3), "host_copy_threads": threads,
            "buffer_bytes": nbytes, "samples_ms": samples}


def floor_fields(bytes_per_env: int | None, num_envs: int, kernel_ms: float, ceiling: dict | None) -> dict:
    """Bytes touched, the memory floor at the ceiling's rate and how far the kernel is above it."""
    if not bytes_per_env or not ceiling:
        return {"bytes_touched": None, "memory_floor_ms": None, "x_memory_floor": None, "host_copy": None}
    touched = bytes_per_env * num_envs
    floor_ms = touched / ceiling["host_copy_Bps"] * 1e3
    return {"bytes_touched": touched, "memory_floor_ms": floor_ms, "x_memory_floor": kernel_ms / floor_ms,
            "host_copy": {k: v for k, v in ceiling.items() if k != "samples_ms"}}
