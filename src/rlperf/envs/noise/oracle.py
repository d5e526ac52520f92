"""numpy implementation of the counter-based generator: the parity oracle for in-kernel noise.

Same uint64 and float32 arithmetic as rlperf.envs.noise.counter, operation for operation, vectorised over
(env, k): uniforms are bit-identical to the kernel's, and so are the Gaussians (their ln and cos are
polynomials, not libm) unless a compiler contracts a multiply-add; tests allow a few ulp there.
"""

from __future__ import annotations

import numpy as np

from rlperf.envs.noise.constants import (ATANH, COS, EXP_MASK, GAMMA, HALF_PI, INV22, INV24, LN2, MANT_MASK,
                                         MASK22, MASK24, MIX1, MIX2, ONE_BITS, S16, S22, S27, S30, S31, S40,
                                         SEED_SALT, SIN, SQRT2, TWO24, U23)


def mix64(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


def stream_keys(seed: int, step: int, num_envs: int) -> np.ndarray:
    """(num_envs,) uint64 keys of envs 0..num_envs-1 at `step`."""
    h = mix64(np.array([seed], dtype=np.uint64) ^ SEED_SALT)
    h = mix64(h ^ np.uint64(step))
    return mix64(h ^ np.arange(num_envs, dtype=np.uint64))


def bits(seed: int, step: int, num_envs: int, width: int) -> np.ndarray:
    """(num_envs, width) uint64: value k of each env's stream."""
    keys = stream_keys(seed, step, num_envs)
    offsets = (np.arange(width, dtype=np.uint64) + np.uint64(1)) * GAMMA
    return mix64(keys[:, None] + offsets[None, :])


def uniform(seed: int, step: int, num_envs: int, width: int) -> np.ndarray:
    """float32 U(-1, 1) draws, bit-identical to `counter.uniform_at` for column k."""
    m = (bits(seed, step, num_envs, width) >> S40).astype(np.int64)
    return (2 * m + 1 - TWO24).astype(np.float32) * INV24


def _horner(x: np.ndarray, coefs) -> np.ndarray:
    out = np.full_like(x, coefs[-1])
    for c in coefs[-2::-1]:
        out = c + x * out
    return out


def neg2_log_u(m1: np.ndarray) -> np.ndarray:
    """-2 ln((m1 + 1) / 2^24), the same float32 operations as counter.neg2_log_u."""
    x = (m1.astype(np.int64) + 1).astype(np.float32)
    bits = x.view(np.uint32)
    e = ((bits >> U23) & EXP_MASK).astype(np.int64) - 127
    m = ((bits & MANT_MASK) | ONE_BITS).view(np.float32)
    big = m > SQRT2
    m = np.where(big, m * np.float32(0.5), m)
    e = np.where(big, e + 1, e)
    t = (m - np.float32(1)) / (m + np.float32(1))
    ln_m = t * _horner(t * t, ATANH)
    return np.maximum(np.float32(2) * ((24 - e).astype(np.float32) * LN2 - ln_m), np.float32(0))


def cos_turn(m2: np.ndarray) -> np.ndarray:
    """cos(2 pi m2 / 2^24), the same float32 operations as counter.cos_turn."""
    q = m2 >> S22
    a = (m2 & MASK22).astype(np.int64).astype(np.float32) * INV22 * HALF_PI
    a2 = a * a
    s = a * _horner(a2, SIN)
    c = _horner(a2, COS)
    return np.select([q == 0, q == 1, q == 2], [c, -s, -c], s).astype(np.float32)


def normal(seed: int, step: int, num_envs: int, width: int) -> np.ndarray:
    """float32 N(0, 1) draws, the same Box-Muller as `counter.normal_at` (no libm: bit-identical too)."""
    b = bits(seed, step, num_envs, width)
    return (np.sqrt(neg2_log_u(b >> S40)) * cos_turn((b >> S16) & MASK24)).astype(np.float32)
