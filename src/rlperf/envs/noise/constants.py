"""The counter-based generator's constants, shared by the Numba device functions and the numpy oracle.

splitmix64 (Steele, Lea, Flood 2014): state advanced by the golden-ratio gamma, output finalised by the
mix64 bijection. A (seed, step, env) stream key is three absorbing mix64 rounds; value k of that stream
is the splitmix64 output mix64(key + (k + 1) * GAMMA). Uniforms take the top 24 bits.
"""

from __future__ import annotations

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
SEED_SALT = np.uint64(0x6A09E667F3BCC909)  # sqrt(2) fraction bits: seed 0 does not start at state 0
S30, S27, S31 = np.uint64(30), np.uint64(27), np.uint64(31)
S40, S16, MASK24 = np.uint64(40), np.uint64(16), np.uint64(0xFFFFFF)
TWO24 = 16777216  # 2**24
INV24 = np.float32(2.0 ** -24)

# Box-Muller without libm (so the per-value loop vectorises and numpy reproduces it op for op):
# ln x = e ln2 + ln m with m in [sqrt(1/2), sqrt 2) from the float32 bits, ln m = 2 atanh(t), t = (m-1)/(m+1),
# |t| <= 0.1716, odd series to t^9 (next term < 4e-9 relative); the angle's quadrant comes from 2 bits and
# sin/cos of the remaining [0, pi/2) from Taylor series to degree 13/14 (truncation < 6e-8).
LN2 = np.float32(np.log(2.0))
SQRT2 = np.float32(np.sqrt(2.0))
HALF_PI = np.float32(np.pi / 2)
INV22 = np.float32(2.0 ** -22)
S22, MASK22 = np.uint64(22), np.uint64(0x3FFFFF)
EXP_MASK, MANT_MASK, ONE_BITS = np.uint32(0xFF), np.uint32(0x7FFFFF), np.uint32(0x3F800000)
U23 = np.uint32(23)
ATANH = tuple(np.float32(2.0 / k) for k in (1, 3, 5, 7, 9))  # 2 atanh(t) = sum 2 t^k / k
SIN = tuple(np.float32((-1) ** j / float(np.prod(np.arange(1, 2 * j + 2)))) for j in range(7))
COS = tuple(np.float32((-1) ** j / float(np.prod(np.arange(1, 2 * j + 1)))) for j in range(8))
