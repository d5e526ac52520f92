"""Counter-based noise inside Numba kernels: splitmix64 keyed by (seed, step, env, k).

Every function is `@njit(inline="always")`, so a kernel calls it per env with no call overhead and no
memory traffic; the draws depend only on their key, never on the thread count or chunking. Integer
math is uint64 throughout (mixing in a signed int would promote to float64 in Numba).

* `uniform_at(key, k)`: float32 U(-1, 1) on the 2^24 odd multiples of 2^-24: symmetric, mean exactly 0,
  never +-1, exact in float32 (so the numpy oracle reproduces it bit for bit).
* `normal_at(key, k)`: float32 Box-Muller, r = sqrt(-2 ln u1) with u1 in (0, 1] from the top 24 bits and
  the angle from the next 24; tails are cut at sqrt(48 ln 2) = 5.77 sigma (one draw in ~10^8 beyond 5.5).
  ln and cos are short polynomials on the float32 bits (rlperf.envs.noise.constants), not libm calls:
  libm's scalar logf/cosf kept the loop scalar and cost ~65x the uniform draw.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from rlperf.envs.noise.constants import (ATANH, COS, EXP_MASK, GAMMA, HALF_PI, INV22, INV24, LN2, MANT_MASK,
                                         MASK22, MASK24, MIX1, MIX2, ONE_BITS, S16, S22, S27, S30, S31, S40,
                                         SEED_SALT, SIN, SQRT2, TWO24, U23)

A1, A3, A5, A7, A9 = ATANH
S0, S1, S2, S3, S4, S5, S6 = SIN
C0, C1, C2, C3, C4, C5, C6, C7 = COS
F0, F05, F1, F2 = np.float32(0.0), np.float32(0.5), np.float32(1.0), np.float32(2.0)

_OPTS = dict(inline="always", cache=True, nogil=True)


@intrinsic
def f32_bits(typingctx, x):
    """The uint32 bit pattern of a float32 (an LLVM bitcast: free, and it keeps the loop vectorisable;
    Numba's scalar .view() goes through a 0-d array and costs ~100 ns)."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.uint32(types.float32), codegen


@intrinsic
def bits_f32(typingctx, x):
    """The float32 with bit pattern `x` (uint32)."""
    if x != types.uint32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


@njit(**_OPTS)
def mix64(z):
    """splitmix64's finaliser: a bijection of uint64 with full avalanche."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@njit(**_OPTS)
def stream_key(seed, step, env):
    """The uint64 key of one env's stream at one step; hoist it out of the per-value loop."""
    h = mix64(np.uint64(seed) ^ SEED_SALT)
    h = mix64(h ^ np.uint64(step))
    return mix64(h ^ np.uint64(env))


@njit(**_OPTS)
def bits_at(key, k):
    """Value k of the stream: splitmix64's (k + 1)-th output from state `key`."""
    return mix64(key + (np.uint64(k) + np.uint64(1)) * GAMMA)


@njit(**_OPTS)
def uniform_at(key, k):
    """float32 U(-1, 1): (2m + 1 - 2^24) / 2^24 for the top 24 bits m."""
    m = np.int64(bits_at(key, k) >> S40)
    return np.float32(2 * m + 1 - TWO24) * INV24


@njit(**_OPTS)
def neg2_log_u(m1):
    """-2 ln((m1 + 1) / 2^24) in float32 for an integer m1 in [0, 2^24): exponent bits + atanh series."""
    x = np.float32(np.int64(m1) + np.int64(1))  # exact: at most 2^24
    bits = f32_bits(x)
    e = np.int64((bits >> U23) & EXP_MASK) - 127
    m = bits_f32(np.uint32((bits & MANT_MASK) | ONE_BITS))  # [1, 2)
    big = m > SQRT2  # branch-free: a data-dependent branch mispredicts half the time
    m = m * (F05 if big else F1)
    e = e + np.int64(big)
    t = (m - F1) / (m + F1)
    t2 = t * t
    ln_m = t * (A1 + t2 * (A3 + t2 * (A5 + t2 * (A7 + t2 * A9))))
    return max(F2 * (np.float32(24 - e) * LN2 - ln_m), F0)


@njit(**_OPTS)
def cos_turn(m2):
    """cos(2 pi m2 / 2^24) in float32 for an integer m2 in [0, 2^24): quadrant bits + Taylor series."""
    q = m2 >> S22
    a = np.float32(np.int64(m2 & MASK22)) * INV22 * HALF_PI  # [0, pi/2)
    a2 = a * a
    s = a * (S0 + a2 * (S1 + a2 * (S2 + a2 * (S3 + a2 * (S4 + a2 * (S5 + a2 * S6))))))
    c = C0 + a2 * (C1 + a2 * (C2 + a2 * (C3 + a2 * (C4 + a2 * (C5 + a2 * (C6 + a2 * C7))))))
    # quadrant q: cos = c, -s, -c, s. Branch-free and exact: one product is +-0, the other x * 1.
    odd = np.float32(np.int64(q & np.uint64(1)))
    sign = np.float32(1 - 2 * np.int64(((q + np.uint64(1)) >> np.uint64(1)) & np.uint64(1)))
    return (c * (F1 - odd) + s * odd) * sign


@njit(**_OPTS)
def normal_at(key, k):
    """float32 N(0, 1) by Box-Muller from one 64-bit value (cosine branch)."""
    b = bits_at(key, k)
    return math.sqrt(neg2_log_u(b >> S40)) * cos_turn((b >> S16) & MASK24)


@njit(**_OPTS)
def uniform_f32(seed, step, env, k):
    """U(-1, 1) for (seed, step, env, k) in one call (recomputes the key: prefer stream_key + uniform_at)."""
    return uniform_at(stream_key(seed, step, env), k)


@njit(**_OPTS)
def normal_f32(seed, step, env, k):
    """N(0, 1) for (seed, step, env, k) in one call (see uniform_f32)."""
    return normal_at(stream_key(seed, step, env), k)


@njit(parallel=True, cache=True, nogil=True)
def fill_uniform(seed, step, scales, out):
    """out[i, k] = U(-1, 1)(seed, step, i, k) * scales[k]: the standalone variant of the benchmark."""
    n, width = out.shape
    for i in prange(n):
        key = stream_key(seed, step, i)
        for k in range(width):
            out[i, k] = uniform_at(key, k) * scales[k]


@njit(parallel=True, cache=True, nogil=True)
def fill_normal(seed, step, scales, out):
    """out[i, k] = N(0, 1)(seed, step, i, k) * scales[k]."""
    n, width = out.shape
    for i in prange(n):
        key = stream_key(seed, step, i)
        for k in range(width):
            out[i, k] = normal_at(key, k) * scales[k]
