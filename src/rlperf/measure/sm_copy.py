"""A device copy written as a plain SM kernel: a second witness for the device-copy ceiling.

The ceiling (`measure.ceilings`) times torch's `copy_`; a gather is a copy plus an index, so the ceiling bounds it
only if `copy_` itself runs at the memory's speed. This kernel is the simplest copy that can: every thread
loads `U` 16-byte vectors (a block's loads for one tile all issued before its first store), then stores them.
If it outruns `copy_`, the ceiling was torch's, not the machine's (issue 23: a floor a gather must not beat).
"""

from __future__ import annotations

import functools

from rlperf.measure.cupy_stream import cupy_stream

_SOURCE = r"""
typedef unsigned long long u64;
#define COPY(U) copy_tile<U>((const int4*)src, (int4*)dst, n)
template <int U>
__device__ __forceinline__ void copy_tile(const int4* __restrict__ src, int4* __restrict__ dst, long long n) {
    const long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
    int4 t[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        if (i < n) t[u] = src[i];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long i = base + (long long)u * blockDim.x;
        if (i < n) dst[i] = t[u];
    }
}
extern "C" __global__ void copy_int4_u2(const u64 src, const u64 dst, long long n) { COPY(2); }
extern "C" __global__ void copy_int4_u4(const u64 src, const u64 dst, long long n) { COPY(4); }
extern "C" __global__ void copy_int4_u8(const u64 src, const u64 dst, long long n) { COPY(8); }
"""
UNROLLS = (2, 4, 8)
THREADS = 256


@functools.lru_cache(maxsize=None)
def _kernel(unroll: int):
    import cupy

    if unroll not in UNROLLS:
        raise ValueError(f"unroll must be one of {UNROLLS}, got {unroll}")
    return cupy.RawModule(code=_SOURCE, options=("-std=c++17",)).get_function(f"copy_int4_u{unroll}")


def sm_copy(dst, src, *, unroll: int = 4, stream=None) -> None:
    """Copy torch CUDA tensor `src` into `dst` (same byte count, a multiple of 16, both 16-byte aligned) on
    `stream` (torch's current one if None)."""
    import numpy as np
    import torch

    nbytes = src.numel() * src.element_size()
    if nbytes != dst.numel() * dst.element_size() or nbytes % 16 or (src.data_ptr() | dst.data_ptr()) % 16:
        raise ValueError("sm_copy needs equal byte counts, a multiple of 16, and 16-byte aligned buffers")
    n = nbytes // 16
    stream = stream or torch.cuda.current_stream(src.device)
    blocks = -(-n // (THREADS * unroll))
    with cupy_stream(stream):
        _kernel(unroll)((blocks,), (THREADS,), (np.uint64(src.data_ptr()), np.uint64(dst.data_ptr()), np.int64(n)))
