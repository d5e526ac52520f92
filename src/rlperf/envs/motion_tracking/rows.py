"""Per-env float32 helpers of the motion-tracking kernel, all `inline="always"` (docs/kernel-profile.md, MT).

Why these exist: the kernel used to call libm per env for acosf (15 calls), atan2, sincos and float64
exp. `acos01` and `half_yaw` replace those calls with a few multiplies and a square root, in float32
like the numpy reference; their accuracy is tested against numpy on dense sweeps
(tests/envs/test_motion_tracking_rows.py). fastmath leaves out nnan/ninf, so NaN and inf still flow through.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
_OPTS = dict(inline="always", cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")

F0, F05, F1, F2 = np.float32(0.0), np.float32(0.5), np.float32(1.0), np.float32(2.0)
# Cephes asinf on [0, 0.5]: asin(x) = x + x z P(z), z = x^2, relative error ~2.5e-7
P0, P1, P2, P3, P4 = (np.float32(c) for c in (1.6666752422e-1, 7.4953002686e-2, 4.5470025998e-2,
                                              2.4181311049e-2, 4.2163199048e-2))
PIO2_HI = np.float32(np.pi / 2)
PIO2_LO = np.float32(np.pi / 2 - float(np.float32(np.pi / 2)))


@njit(**_OPTS)
def _asin_poly(x, z):
    return x + x * z * ((((P4 * z + P3) * z + P2) * z + P1) * z + P0)


@njit(**_OPTS)
def acos01(d):
    """acos(d) in float32 for d in [0, 1] (the caller clips), NaN in NaN out, within 3 ulp of np.arccos.

    d > 0.5: 2 asin(sqrt((1 - d) / 2)), where 1 - d is exact (Sterbenz), so no cancellation near 1, the
    common case (tracking errors are small); else pi/2 - asin(d) with pi/2 split in two floats.
    """
    if d > F05:
        z = F05 * (F1 - d)
        return F2 * _asin_poly(math.sqrt(z), z)
    return PIO2_HI - (_asin_poly(d, d * d) - PIO2_LO)


@njit(**_OPTS)
def ori_error(dot):
    """(2 acos(clip(|dot|, 0, 1)))^2 in float32; NaN passes through as in numpy."""
    d = abs(dot)
    if d > F1:
        d = F1
    e = F2 * acos01(d)
    return e * e


@njit(**_OPTS)
def half_yaw(y, x):
    """(cos, sin) of atan2(y, x) / 2 up to a common sign, as float32, without atan2, cos or sin.

    (r + x, y) and (y, r - x), r = hypot(x, y), both point along the half angle (times 2r cos and
    2r sin of it); the one without cancellation is normalised. The sign is free because every use is
    even in it (2 dw dz, 2 dz^2, |<d q, q'>|). x = y = 0 gives (1, 0) like atan2(0, 0) = 0; NaN stays NaN.
    Float64 on purpose: under `arcp`, LLVM turns float32 `u / sqrt(n2)` into rsqrtss plus one Newton
    step, whose -2e-8 bias in |d| showed up as a 5x larger motion_body_ori log difference.
    """
    x, y = float(x), float(y)
    r = math.sqrt(x * x + y * y)
    if x >= 0.0:
        u, v = r + x, y
    else:
        u, v = y, r - x
    n = math.sqrt(u * u + v * v)
    if n == 0.0:
        return F1, F0
    inv = 1.0 / n
    return np.float32(u * inv), np.float32(v * inv)


@njit(**_OPTS)
def quat_mul(aw, ax, ay, az, bw, bx, by, bz):
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )
