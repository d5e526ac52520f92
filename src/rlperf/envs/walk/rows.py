"""Per-env row helpers shared by the walk and probe kernels, all `inline="always"`.

Why inline: a plain @njit helper taking a dozen arrays is an out-of-line call per env whose array
arguments are passed as ~7 scalars each (the walk-layout observation writer was such a call, measured in
docs/kernel-profile.md). Inlined at Numba IR level, the writes fuse into the env loop.

fastmath leaves out nnan/ninf, so NaN and inf compare as IEEE says and the termination guard holds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
_OPTS = dict(inline="always", cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
OBS_GYRO, OBS_DOF_VEL, OBS_LINVEL = np.float32(0.25), np.float32(0.05), np.float32(2.0)
TWO_PI32, PI32 = np.float32(2 * np.pi), np.float32(np.pi)
F0, F05, F1, F2, F3 = np.float32(0.0), np.float32(0.5), np.float32(1.0), np.float32(2.0), np.float32(3.0)
INF = math.inf


@njit(**_OPTS)
def wrap_two_pi(y):
    """np.fmod(y, 2 pi) in float32, bit for bit, without the libm call on the common range.

    For 0 <= y < 2 pi the result is y; for 2 pi <= y < 4 pi it is y - 2 pi, exact by Sterbenz's lemma
    (y / 2 <= 2 pi <= y), which is what fmod returns. Anything else (negative, larger, NaN) calls fmod.
    """
    if y >= F0 and y < TWO_PI32:
        return y
    if y >= TWO_PI32 and y < F2 * TWO_PI32:
        return y - TWO_PI32
    return np.fmod(y, TWO_PI32)


@njit(**_OPTS)
def swing_height(phase, swing):
    """Foot height target (C3) in float32, the reference's operation order, so stance thresholds agree."""
    x = wrap_two_pi(np.float32(phase + PI32)) / TWO_PI32
    t = F2 * x if x <= F05 else F2 * x - F1
    b = t * t * t + F3 * t * t * (F1 - t)
    return swing * b if x <= F05 else swing * (F1 - b)


@njit(**_OPTS)
def foot_contact(contacts, i, foot):
    """Any of the foot's sensors > 0.5; non-short-circuit ORs, so no branch per sensor."""
    hit = False
    for s in range(contacts.shape[2]):
        hit |= contacts[i, foot, s] > F05
    return hit


@njit(**_OPTS)
def is_terminated(gravity_z, base_z, cos_max_tilt, min_z):
    """tilt > max_tilt (as g_z < cos(max_tilt)) OR base below min_z OR either non-finite, in float64.

    NaN compares false, so the explicit finiteness test (|x| < inf fails for NaN and inf) decides those
    rows; without nnan/ninf fastmath LLVM keeps it.
    """
    gz = float(gravity_z)
    bz = float(base_z)
    finite = (abs(gz) < INF) & (abs(bz) < INF)
    return (gz < cos_max_tilt) | (bz < min_z) | (not finite)


@njit(**_OPTS)
def write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                  default_angles, actor_obs, critic_obs):
    """Actor (98, noise then scale) and critic (101, clean + linvel) walk-layout rows of env i (C3).

    `default_angles` is float32 (converted once per call on the host), so the row is float32 math only.
    """
    for k in range(3):
        actor_obs[i, k] = (gyro[i, k] + noise[i, k]) * OBS_GYRO
        actor_obs[i, 3 + k] = -(gravity[i, k] + noise[i, 3 + k])
        critic_obs[i, k] = gyro[i, k] * OBS_GYRO
        critic_obs[i, 3 + k] = -gravity[i, k]
    for j in range(dof_pos.shape[1]):
        q = dof_pos[i, j] - default_angles[j]
        actor_obs[i, 6 + j] = q + noise[i, 6 + j]
        critic_obs[i, 6 + j] = q
        actor_obs[i, 35 + j] = (dof_vel[i, j] + noise[i, 35 + j]) * OBS_DOF_VEL
        critic_obs[i, 35 + j] = dof_vel[i, j] * OBS_DOF_VEL
    for j in range(actions.shape[1]):
        actor_obs[i, 64 + j] = actions[i, j]
        critic_obs[i, 64 + j] = actions[i, j]
    for k in range(3):
        actor_obs[i, 93 + k] = commands[i, k]
        critic_obs[i, 93 + k] = commands[i, k]
    for f in range(2):
        actor_obs[i, 96 + f] = gait_phase[i, f]
        critic_obs[i, 96 + f] = gait_phase[i, f]
    for k in range(3):
        critic_obs[i, 98 + k] = linvel[i, k] * OBS_LINVEL


@njit(**_OPTS)
def weighted(scale, value):
    """scale * value, or exactly 0 for an inactive slot (so a NaN term of a zero-scale slot stays out)."""
    return scale * value if scale != 0.0 else 0.0
