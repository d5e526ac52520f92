"""CuPy-compiled (NVRTC) CUDA kernels shared by the placements that need more than torch offers.

Rows are copied as raw 16- or 8-byte vectors, so one kernel serves every non-elided layout (fp32,
bf16, one-byte flags): only the row size in vectors changes. Elided (compact) layouts have their own
kernel, which assembles each batch row from the sampled row, its successor or terminal row, following a
per-vector plan (`replay.compact_plan`): `sample_compact_merge` with the `merge` plan, what gpu-compact-fused
launches (its straddling vectors from whole 16-byte loads and byte masks, `replay.compact_merge`), or
`sample_compact` with the `bytes` plan (those vectors byte by byte; the kernel probe's alternative).
`sample_compact_a16` is `sample_compact_merge`'s code under another name, for the probe's launches over
compact-a16 rows. The fused sampler's draw is the arithmetic of `replay.sampler.CounterSampler.draws` (its host oracle).

Kernels take raw addresses (uint64) so torch owns every buffer; they run on the torch stream given.
"""

from __future__ import annotations

import functools
import re

from rlperf.measure.cupy_stream import cupy_stream

_SOURCE = r"""
typedef unsigned long long u64;

__device__ __forceinline__ u64 splitmix64(u64 x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Cache policy of the row copy's loads (LD) and stores (ST), a template factor so the kernel probe can time
// one against another (issue 23; measured on the H200 2026-12-04, none adopted: docs/replay-compact-kernel.md,
// "Cache hints"; the placements launch LD 0, ST 0): LD 0 plain, 1 evict-first
// (`__ldcs`, ld.global.cs), 2 read-only without L1 allocation and with a 256-byte L2 prefetch
// (ld.global.nc.L1::no_allocate.L2::256B: a row spans 15-30 such blocks); ST 0 plain, 1 evict-first (`__stcs`).
template <int LD> __device__ __forceinline__ int4 load_vec(const int4* p) {
    if constexpr (LD == 1) return __ldcs(p);
    if constexpr (LD == 2) {
        int4 v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
        return v;
    }
    return *p;
}
template <int LD> __device__ __forceinline__ float2 load_vec(const float2* p) {
    if constexpr (LD == 1) return __ldcs(p);
    if constexpr (LD == 2) {
        float2 v;
        asm("ld.global.nc.L1::no_allocate.L2::256B.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p));
        return v;
    }
    return *p;
}
template <int ST, typename V> __device__ __forceinline__ void store_vec(V* p, const V v) {
    if constexpr (ST == 1) __stcs(p, v);
    else *p = v;
}

// Copy one row of `vecs` vectors with a warp: each lane issues all of its loads before its first
// store (U per lane), so a row's loads are all in flight at once instead of one latency per vector.
template <typename V, int U, int LD = 0, int ST = 0>
__device__ __forceinline__ void copy_row(const V* __restrict__ src, V* __restrict__ dst, int vecs, int lane) {
    for (int base = lane; base < vecs; base += 32 * U) {
        V tmp[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int v = base + u * 32;
            if (v < vecs) tmp[u] = load_vec<LD>(src + v);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int v = base + u * 32;
            if (v < vecs) store_vec<ST>(dst + v, tmp[u]);
        }
    }
}

// Copy `rows` rows, one warp per row: out[r] = table[idx[r]].
template <typename V, int U>
__device__ __forceinline__ void copy_rows(const V* __restrict__ table, const long long* __restrict__ idx,
                                          V* __restrict__ out, int rows, int vecs) {
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    for (int r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += gridDim.x * warps)
        copy_row<V, U>(table + idx[r] * (long long)vecs, out + (long long)r * vecs, vecs, lane);
}

// Zero-copy gather: `table` may be pinned host memory (UVA); indices drawn beforehand.
extern "C" __global__ void gather_int4(const u64 table, const u64 idx, const u64 out, int rows, int vecs) {
    copy_rows<int4, 8>((const int4*)table, (const long long*)idx, (int4*)out, rows, vecs);
}

__device__ __forceinline__ long long draw_row(int r, int rows, u64 first, u64 count, u64 capacity, u64 seed,
                                              u64 tick) {
    // uniform over the `count` sampleable rows starting at `first`, wrapping at capacity
    const u64 draw = splitmix64(seed ^ splitmix64(tick * (u64)rows + (u64)r)) % count;
    return (long long)((first + draw) % capacity);
}

// Fused sampler: counter-based indices (splitmix64 of seed, tick, row) and the row copy in one pass. P > 1 (the
// kernel probe's `parts`, issue 23: is fp32's gap a launch's tail?) splits each row into P runs of whole vectors,
// one warp a run, so a launch has P times the work units, each a P-th as long; the run-0 warp writes the index.
template <typename V, int U, int LD = 0, int ST = 0, int P = 1>
__device__ __forceinline__ void sample_rows(const V* __restrict__ table, long long* __restrict__ idx,
                                            V* __restrict__ out, int rows, int vecs, u64 first, u64 count,
                                            u64 capacity, u64 seed, u64 tick) {
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    if constexpr (P == 1) {
        for (int r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += gridDim.x * warps) {
            const long long row = draw_row(r, rows, first, count, capacity, seed, tick);
            if (lane == 0) idx[r] = row;
            copy_row<V, U, LD, ST>(table + row * (long long)vecs, out + (long long)r * vecs, vecs, lane);
        }
    } else {
        const int run = (vecs + P - 1) / P;
        for (int w = blockIdx.x * warps + (threadIdx.x >> 5); w < rows * P; w += gridDim.x * warps) {
            const int r = w / P, lo = (w % P) * run;
            const long long row = draw_row(r, rows, first, count, capacity, seed, tick);
            if (lane == 0 && lo == 0) idx[r] = row;
            if (lo < vecs)
                copy_row<V, U, LD, ST>(table + row * (long long)vecs + lo, out + (long long)r * vecs + lo,
                                       min(run, vecs - lo), lane);
        }
    }
}

#define SAMPLE_ARGS const u64 table, const u64 idx, const u64 out, int rows, int vecs, u64 first, u64 count, \
    u64 capacity, u64 seed, u64 tick
// sample_int4 (16-byte rows) and sample_float2 (8-byte rows), and each under a cache policy (LD, ST) with the
// name suffix the kernel probe's `hint` option maps to (kernel_probe.HINTS)
#define SAMPLE_KERNEL(NAME, V, U, LD, ST, P) \
    extern "C" __global__ void NAME(SAMPLE_ARGS) { \
        sample_rows<V, U, LD, ST, P>((const V*)table, (long long*)idx, (V*)out, rows, vecs, first, count, \
                                     capacity, seed, tick); \
    }
// ... split into P runs a row with U/P vectors a lane in flight (`parts`, launched with P times the warps:
// kernel_probe.PARTS; a warp's run still goes in one pass, in fewer registers), and unsplit with U/2 (`unroll=half`:
// the registers alone)
#define SAMPLE_KERNELS(BASE, V, U) \
    SAMPLE_KERNEL(BASE, V, U, 0, 0, 1) \
    SAMPLE_KERNEL(BASE##_ldcs, V, U, 1, 0, 1) \
    SAMPLE_KERNEL(BASE##_stcs, V, U, 0, 1, 1) \
    SAMPLE_KERNEL(BASE##_cs, V, U, 1, 1, 1) \
    SAMPLE_KERNEL(BASE##_l2pf, V, U, 2, 0, 1) \
    SAMPLE_KERNEL(BASE##_l2pf_stcs, V, U, 2, 1, 1) \
    SAMPLE_KERNEL(BASE##_p2, V, U / 2, 0, 0, 2) \
    SAMPLE_KERNEL(BASE##_p4, V, U / 4, 0, 0, 4) \
    SAMPLE_KERNEL(BASE##_uhalf, V, U / 2, 0, 0, 1)
SAMPLE_KERNELS(sample_int4, int4, 8)
SAMPLE_KERNELS(sample_float2, float2, 16)

// A row of `n8` 8-byte units, 8-byte aligned, copied with 16-byte loads (the `int4` variant of sample_float2, an
// unmeasured alternative): a row 8 B past a 16-byte boundary starts with one 8-byte head, the aligned middle
// goes as int4 (half the load instructions of float2), an odd unit left over is an 8-byte tail. Stores are int4
// when the output row's middle is 16-byte aligned too, else two 8-byte stores (the output row's parity is r's,
// the source's is the drawn row's). Head and tail (lanes 0 and 1) are loaded before the middle, stored after.
template <int U>
__device__ __forceinline__ void copy_row8_wide(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                               int n8, int lane) {
    const int h = (int)(((u64)src >> 3) & 1);
    const int m = (n8 - h) >> 1;
    const int t = (n8 - h) & 1;
    const int2* s8 = (const int2*)src;
    int2* d8 = (int2*)dst;
    int2 edge;
    const int e = lane == 0 ? (h ? 0 : -1) : lane == 1 ? (t ? n8 - 1 : -1) : -1;
    if (e >= 0) edge = s8[e];
    const int4* s16 = (const int4*)(s8 + h);
    const bool same = (int)(((u64)dst >> 3) & 1) == h;  // warp-uniform: the output's middle is 16-byte aligned
    for (int base = lane; base < m; base += 32 * U) {
        int4 tmp[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int v = base + u * 32;
            if (v < m) tmp[u] = s16[v];
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int v = base + u * 32;
            if (v >= m) continue;
            if (same) {
                ((int4*)(d8 + h))[v] = tmp[u];
            } else {
                d8[h + 2 * v] = make_int2(tmp[u].x, tmp[u].y);
                d8[h + 2 * v + 1] = make_int2(tmp[u].z, tmp[u].w);
            }
        }
    }
    if (e >= 0) d8[e] = edge;
}

extern "C" __global__ void sample_float2_wide(const u64 table, const u64 idx, const u64 out, int rows, int n8,
                                              u64 first, u64 count, u64 capacity, u64 seed, u64 tick) {
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    const long long row_bytes = 8LL * n8;
    for (int r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += gridDim.x * warps) {
        const long long row = draw_row(r, rows, first, count, capacity, seed, tick);
        if (lane == 0) ((long long*)idx)[r] = row;
        copy_row8_wide<8>((const unsigned char*)table + row * row_bytes, (unsigned char*)out + (long long)r * row_bytes,
                          n8, lane);
    }
}

// ---- elided (compact) rows: next_obs / next_critic from the successor row or the terminal table ----
// Plan per 16-byte output vector (replay.compact_plan), held in shared memory: int4 {kind, source offset,
// terminal offset, 0}; kind 0 the sampled row, 1 next (successor, or the terminal row when the row ended),
// 2 zero, 3 mixed: assembled byte by byte from the byte plan of mixed vector number `y`; 4 merge (only in
// sample_compact_merge): joined from whole loads, entry at int4 `y` of the shared table.
#define COMPACT_MAX_VECS 256
#define COMPACT_MAX_MIXED 8

__device__ __forceinline__ uint4 words4(unsigned int a, unsigned int b, unsigned int c, unsigned int d) {
    uint4 r;
    r.x = a; r.y = b; r.z = c; r.w = d;
    return r;
}

// 16 source bytes at `off` of a 16-byte aligned row: one int4 load when aligned, else the two aligned int4
// around them, joined by word selects and a funnel shift (fields may be only 2-byte aligned).
__device__ __forceinline__ uint4 load16(const unsigned char* base, int off) {
    const int a = off & ~15;
    const uint4 A = *(const uint4*)(base + a);
    const int r = off & 15;
    if (r == 0) return A;
    const uint4 B = *(const uint4*)(base + a + 16);
    unsigned int w0 = A.x, w1 = A.y, w2 = A.z, w3 = A.w, w4 = B.x, w5 = B.y, w6 = B.z, w7 = B.w;
    if (r & 8) { w0 = w2; w1 = w3; w2 = w4; w3 = w5; w4 = w6; w5 = w7; }
    if (r & 4) { w0 = w1; w1 = w2; w2 = w3; w3 = w4; w4 = w5; }
    const unsigned int s = (r & 3) * 8;
    return words4(__funnelshift_r(w0, w1, s), __funnelshift_r(w1, w2, s), __funnelshift_r(w2, w3, s),
                  __funnelshift_r(w3, w4, s));
}

// A vector across a segment boundary (two a motion-tracking row): byte by byte.
__device__ __forceinline__ uint4 mixed_vector(const int4* plan, const unsigned char* row, const unsigned char* next,
                                              bool ended) {
    unsigned int w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        const int4 b = plan[k];
        unsigned int byte = 0u;
        if (b.x == 0) byte = row[b.y];
        else if (b.x == 1) byte = next[ended ? b.z : b.y];
        w[k >> 2] |= byte << (8 * (k & 3));
    }
    return words4(w[0], w[1], w[2], w[3]);
}

// One run of a merged vector (kind 0 the row, 1 next, 2 none): its 16 bytes lined up with the output vector.
__device__ __forceinline__ uint4 run16(const int4 run, const unsigned char* row, const unsigned char* next,
                                       bool ended) {
    if (run.x == 0) return load16(row, run.y);
    if (run.x == 1) return load16(next, ended ? run.z : run.y);
    return words4(0u, 0u, 0u, 0u);
}

// A vector across a segment boundary from whole loads (the `merge` plan, replay.compact_merge): its two runs,
// each read as the 16 bytes lined up with the vector (aligned int4 loads and a funnel shift), joined by byte masks.
__device__ __forceinline__ uint4 merge_vector(const int4* entry, const unsigned char* row, const unsigned char* next,
                                              bool ended) {
    const uint4 A = run16(entry[0], row, next, ended), B = run16(entry[1], row, next, ended);
    const int4 ma = entry[2], mb = entry[3];
    return words4((A.x & (unsigned int)ma.x) | (B.x & (unsigned int)mb.x),
                  (A.y & (unsigned int)ma.y) | (B.y & (unsigned int)mb.y),
                  (A.z & (unsigned int)ma.z) | (B.z & (unsigned int)mb.z),
                  (A.w & (unsigned int)ma.w) | (B.w & (unsigned int)mb.w));
}

// Fused sampler for elided layouts, one warp a row: the counter-based row, then every vector of the row and
// of its successor (index + step) loaded before any store; the row's terminal slot is loaded alongside and
// read only afterwards, so its latency overlaps the row's; a row that ended an episode (rare) reloads its
// next fields from its terminal row. MERGE: the plan may hold kind 4 vectors (merge_vector; entry at int4
// `y` of the shared table, which holds `mixed` blocks of 16 int4); false for the default kernel.
template <bool MERGE>
__device__ __forceinline__ void compact_rows(const u64 table, const u64 idx, const u64 out, const u64 slot_of_row,
                                             const u64 terminal, const u64 vplan, const u64 bplan, int rows, int vecs,
                                             int mixed, int row_bytes, int term_bytes, u64 step, u64 first, u64 count,
                                             u64 capacity, u64 seed, u64 tick) {
    constexpr int U = 4;
    __shared__ int4 s_plan[COMPACT_MAX_VECS];
    __shared__ int4 s_bytes[COMPACT_MAX_MIXED * 16];
    for (int i = threadIdx.x; i < vecs; i += blockDim.x) s_plan[i] = ((const int4*)vplan)[i];
    for (int i = threadIdx.x; i < mixed * 16; i += blockDim.x) s_bytes[i] = ((const int4*)bplan)[i];
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    const unsigned char* tab = (const unsigned char*)table;
    for (int r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += gridDim.x * warps) {
        const long long row = draw_row(r, rows, first, count, capacity, seed, tick);
        if (lane == 0) ((long long*)idx)[r] = row;
        const int slot = ((const int*)slot_of_row)[row];
        const unsigned char* src = tab + row * (long long)row_bytes;
        const unsigned char* succ = tab + (long long)(((u64)row + step) % capacity) * row_bytes;
        uint4* dst = (uint4*)out + (long long)r * vecs;
        for (int base = lane; base < vecs; base += 32 * U) {
            uint4 tmp[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int v = base + u * 32;
                if (v >= vecs) continue;
                const int4 p = s_plan[v];
                if (p.x == 0) tmp[u] = load16(src, p.y);
                else if (p.x == 1) tmp[u] = load16(succ, p.y);
                else if (p.x == 3) tmp[u] = mixed_vector(s_bytes + 16 * p.y, src, succ, false);
                else if (MERGE && p.x == 4) tmp[u] = merge_vector(s_bytes + p.y, src, succ, false);
                else tmp[u] = words4(0u, 0u, 0u, 0u);
            }
            if (slot >= 0) {
                const unsigned char* term = (const unsigned char*)terminal + slot * (long long)term_bytes;
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int v = base + u * 32;
                    if (v >= vecs) continue;
                    const int4 p = s_plan[v];
                    if (p.x == 1) tmp[u] = load16(term, p.z);
                    else if (p.x == 3) tmp[u] = mixed_vector(s_bytes + 16 * p.y, src, term, true);
                    else if (MERGE && p.x == 4) tmp[u] = merge_vector(s_bytes + p.y, src, term, true);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int v = base + u * 32;
                if (v < vecs) dst[v] = tmp[u];
            }
        }
    }
}

#define COMPACT_ARGS const u64 table, const u64 idx, const u64 out, const u64 slot_of_row, const u64 terminal, \
    const u64 vplan, const u64 bplan, int rows, int vecs, int mixed, int row_bytes, int term_bytes, u64 step, \
    u64 first, u64 count, u64 capacity, u64 seed, u64 tick
#define COMPACT_PASS table, idx, out, slot_of_row, terminal, vplan, bplan, rows, vecs, mixed, row_bytes, term_bytes, \
    step, first, count, capacity, seed, tick

// The `bytes` plan's kernel: straddling vectors byte by byte (gpu-compact-fused's until 2026-12-04; the kernel
// probe's alternative now).
extern "C" __global__ void sample_compact(COMPACT_ARGS) { compact_rows<false>(COMPACT_PASS); }

// The `merge` plan's kernel, gpu-compact-fused's default (its measurement: docs/replay-compact-kernel.md).
extern "C" __global__ void sample_compact_merge(COMPACT_ARGS) { compact_rows<true>(COMPACT_PASS); }

// The same code under another name, for the kernel probe's `layout=a16` launches over compact-a16 rows (every
// vector one aligned load; replay.kernel_probe), so that Nsight Compute tells them from the default's.
extern "C" __global__ void sample_compact_a16(COMPACT_ARGS) { compact_rows<true>(COMPACT_PASS); }
"""
THREADS = 256  # 8 warps a block, one warp per work unit: a row, or a P-th of one in a `_pP` split build
# The warps that copy one row in the whole-row kernel a fused GPU placement launches (its `_pP` build when P > 1).
# fp32 rows (930 floats, float2) go split over 4 warps, a quarter row each in 38 registers: x0.976 of one warp a row,
# the same batch byte for byte, in every round on the H200 (issue 23; docs/replay-compact-kernel.md,
# "Row splits: gpu-fused's kernel"). bf16 rows (int4) stay whole: split over 2 or 4 warps they measured x1.003 and
# x1.305.
ROW_SPLITS = {"sample_int4": 1, "sample_float2": 4}
COMPACT_MAX_VECS, COMPACT_MAX_MIXED = 256, 8  # the compact kernels' shared-memory plan (as #defined in _SOURCE):
# vectors a row, and blocks of 16 int4 in the shared table (a plan's `table_blocks`)
COMPACT_KERNELS = {"bytes": "sample_compact", "merge": "sample_compact_merge"}  # mixed-vector path -> its kernel


@functools.lru_cache(maxsize=None)
def kernel(name: str):
    import cupy

    return cupy.RawModule(code=_SOURCE, options=("-std=c++17",)).get_function(name)


def registers(name: str) -> int:
    """Registers a thread of kernel `name` takes (the compiler's count): with the block size, what bounds the warps
    resident on an SM, hence the bytes a gather keeps in flight."""
    return int(kernel(name).attributes["num_regs"])


def split_build(kernel: str, parts: int) -> str:
    """The build of whole-row kernel `kernel` that copies each row with `parts` warps (SAMPLE_KERNELS' `_pP`)."""
    return kernel if parts == 1 else f"{kernel}_p{parts}"


def warps_a_row(name: str) -> int:
    """Warps that copy one row in kernel `name`: P for a `_pP` split build, else 1."""
    split = re.search(r"_p(\d+)$", name)
    return int(split.group(1)) if split else 1


@functools.lru_cache(maxsize=None)
def launch_grid(name: str, rows: int, threads: int = THREADS) -> tuple[tuple[int], tuple[int]]:
    """The grid and block of kernel `name` over a batch of `rows` rows: `warps_a_row(name)` warps a row, `threads` a
    block (a multiple of 32: more work units in flight per block, same work per warp). Cached: a launch is on the
    zero-copy pass's wall clock."""
    if threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"threads per block must be a multiple of 32 in 32..1024, got {threads}")
    return (min(-(-rows * warps_a_row(name) // (threads // 32)), 65535),), (threads,)


def launch(name: str, torch_stream, rows: int, *args, threads: int = THREADS) -> None:
    """Launch `name` over a batch of `rows` rows on `torch_stream` (`launch_grid`); ints become the kernel's scalar
    types."""
    grid, block = launch_grid(name, rows, threads)
    with cupy_stream(torch_stream):
        kernel(name)(grid, block, args)
