"""The fused g1_walk_flat update_state kernel: one parallel pass over envs (Numba).

Per env, in order: terms (float32 math on float32 state; weights, reward and log sums in float64),
reward, termination, actor and critic observations. Scales and thresholds are runtime float64 vectors
(a new profile never recompiles): a zero scale is one loop-invariant branch around its costly term and a
select in `weighted`, never a memory round trip. Term values and the per-chunk log sums are scalar locals
(registers), written once per chunk into the chunked rows of rlperf.envs.base, so the logs are bitwise
identical for any thread count. Row helpers are inlined (rows.py); fastmath leaves out nnan/ninf so NaN
and inf rows terminate as in numpy. docs/kernel-profile.md has the measurements behind each choice.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.walk.inputs import P, TERMS
from rlperf.envs.walk.reference import cos_max_tilt
from rlperf.envs.walk.rows import (F0, F05, F1, FASTMATH, foot_contact, is_terminated, swing_height, weighted,
                                   write_obs_row)

__all__ = ["FASTMATH", "walk_update_state", "launch"]

NT = len(TERMS)
(T_LIN, T_ANG, T_P_ANGXY, T_ANGXY, T_P_ORI, T_ORI, T_P_RATE, T_RATE, T_POSE, T_UPPER, T_FEET_ORI,
 T_PHASE, T_ALIVE, T_HEIGHT, T_CLOSE, T_CONTACT, T_DOUBLE, T_AIR, T_FWD, T_UNDER, T_LINZ,
 T_CONTRAST) = range(NT)
P_DT, P_SIGMA, P_FEET_SIGMA, P_SWING = P["ctrl_dt"], P["tracking_sigma"], P["feet_sigma"], P["swing_height"]
P_HEIGHT, P_MIN_Z, P_CLOSE = P["base_height_target"], P["min_base_height"], P["close_feet_threshold"]
P_MIN_FWD, P_AIR_LO, P_AIR_HI = P["min_forward_speed"], P["air_time_min"], P["air_time_max"]


@njit(parallel=True, cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
def walk_update_state(linvel, gyro, gravity, dof_pos, dof_vel, base_z, feet_pos, feet_quat, contacts,
                      commands, actions, last_actions, gait_phase, air_time, noise,
                      default_angles, pose_weights, upper_weights, scales, params, cos_tilt, nchunks, write_obs,
                      reward, terminated, actor_obs, critic_obs, log_partials):
    n = reward.shape[0]
    nj = dof_pos.shape[1]
    sigma = np.float32(params[P_SIGMA])
    feet_sigma = np.float32(params[P_FEET_SIGMA])
    swing = np.float32(params[P_SWING])
    height_target = np.float32(params[P_HEIGHT])
    close_thr = np.float32(params[P_CLOSE])
    min_fwd = np.float32(params[P_MIN_FWD])
    air_lo, air_hi = np.float32(params[P_AIR_LO]), np.float32(params[P_AIR_HI])
    ctrl_dt, min_z = params[P_DT], params[P_MIN_Z]
    s = scales
    need_heights = s[T_PHASE] != 0.0 or s[T_CONTACT] != 0.0 or s[T_CONTRAST] != 0.0
    need_contact = s[T_CONTACT] != 0.0 or s[T_DOUBLE] != 0.0
    chunk = (n + nchunks - 1) // nchunks
    for c in prange(nchunks):
        a = np.zeros(NT)  # chunk accumulators live in a0..a21 below; this row only receives them
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = a9 = a10 = 0.0
        a11 = a12 = a13 = a14 = a15 = a16 = a17 = a18 = a19 = a20 = a21 = 0.0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            ex = commands[i, 0] - linvel[i, 0]
            ey = commands[i, 1] - linvel[i, 1]
            t_lin = math.exp(-(ex * ex + ey * ey) / sigma) if s[T_LIN] != 0.0 else F0
            ez = commands[i, 2] - gyro[i, 2]
            t_ang = math.exp(-(ez * ez) / sigma) if s[T_ANG] != 0.0 else F0
            angxy = gyro[i, 0] * gyro[i, 0] + gyro[i, 1] * gyro[i, 1]
            ori = gravity[i, 0] * gravity[i, 0] + gravity[i, 1] * gravity[i, 1]
            rate = F0
            pose = F0
            upper = F0
            for j in range(nj):
                d = actions[i, j] - last_actions[i, j]
                rate += d * d
                q = dof_pos[i, j] - default_angles[j]
                pose += pose_weights[j] * q * q
                upper += upper_weights[j] * q * q
            feet_ori = (feet_quat[i, 0, 1] * feet_quat[i, 0, 1] + feet_quat[i, 0, 2] * feet_quat[i, 0, 2]
                        + feet_quat[i, 1, 1] * feet_quat[i, 1, 1] + feet_quat[i, 1, 2] * feet_quat[i, 1, 2])
            dz = base_z[i] - height_target
            lz = feet_pos[i, 0, 2]
            rz = feet_pos[i, 1, 2]
            hl = F0
            hr = F0
            if need_heights:
                hl = swing_height(gait_phase[i, 0], swing)
                hr = swing_height(gait_phase[i, 1], swing)
            t_phase = F0
            if s[T_PHASE] != 0.0 and max(linvel[i, 0], F0) >= min_fwd:
                el = lz - hl
                er = rz - hr
                t_phase = math.exp(-(el * el + er * er) / feet_sigma)
            dx = feet_pos[i, 0, 0] - feet_pos[i, 1, 0]
            dy = feet_pos[i, 0, 1] - feet_pos[i, 1, 1]
            dist = np.float32(math.sqrt(dx * dx + dy * dy))
            t_close = (dist - close_thr) * (dist - close_thr) if dist < close_thr else F0
            cl = False
            cr = False
            if need_contact:
                cl = foot_contact(contacts, i, 0)
                cr = foot_contact(contacts, i, 1)
            half = swing * F05
            t_contact = F05 * ((F1 if cl == (hl <= half) else F0) + (F1 if cr == (hr <= half) else F0))
            t_double = max(commands[i, 0], F0) if (cl and cr) else F0
            t_air = F0
            for f in range(2):
                t_air += F1 if (air_time[i, f] > air_lo) & (air_time[i, f] < air_hi) else F0
            vx = linvel[i, 0]
            t_fwd = min(max(vx, F0), max(commands[i, 0], F0))
            under = max(commands[i, 0] - vx, F0)
            t_contrast = F0
            if s[T_CONTRAST] != 0.0:
                e = (lz - rz) - (hl - hr)
                t_contrast = math.exp(-(e * e) / feet_sigma)

            w0 = weighted(s[T_LIN], t_lin)
            w1 = weighted(s[T_ANG], t_ang)
            w2 = weighted(s[T_P_ANGXY], angxy)
            w3 = weighted(s[T_ANGXY], angxy)
            w4 = weighted(s[T_P_ORI], ori)
            w5 = weighted(s[T_ORI], ori)
            w6 = weighted(s[T_P_RATE], rate)
            w7 = weighted(s[T_RATE], rate)
            w8 = weighted(s[T_POSE], pose)
            w9 = weighted(s[T_UPPER], upper)
            w10 = weighted(s[T_FEET_ORI], feet_ori)
            w11 = weighted(s[T_PHASE], t_phase)
            w12 = weighted(s[T_ALIVE], F1)
            w13 = weighted(s[T_HEIGHT], dz * dz)
            w14 = weighted(s[T_CLOSE], t_close)
            w15 = weighted(s[T_CONTACT], t_contact)
            w16 = weighted(s[T_DOUBLE], t_double)
            w17 = weighted(s[T_AIR], t_air)
            w18 = weighted(s[T_FWD], t_fwd)
            w19 = weighted(s[T_UNDER], under * under)
            w20 = weighted(s[T_LINZ], linvel[i, 2] * linvel[i, 2])
            w21 = weighted(s[T_CONTRAST], t_contrast)
            a0 += w0
            a1 += w1
            a2 += w2
            a3 += w3
            a4 += w4
            a5 += w5
            a6 += w6
            a7 += w7
            a8 += w8
            a9 += w9
            a10 += w10
            a11 += w11
            a12 += w12
            a13 += w13
            a14 += w14
            a15 += w15
            a16 += w16
            a17 += w17
            a18 += w18
            a19 += w19
            a20 += w20
            a21 += w21
            total = (((w0 + w1) + (w2 + w3)) + ((w4 + w5) + (w6 + w7)) + ((w8 + w9) + (w10 + w11))
                     + ((w12 + w13) + (w14 + w15)) + ((w16 + w17) + (w18 + w19)) + (w20 + w21))
            reward[i] = np.float32(total * ctrl_dt)
            terminated[i] = is_terminated(gravity[i, 2], base_z[i], cos_tilt, min_z)
            if write_obs:
                write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                              default_angles, actor_obs, critic_obs)
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
        a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15] = a8, a9, a10, a11, a12, a13, a14, a15
        a[16], a[17], a[18], a[19], a[20], a[21] = a16, a17, a18, a19, a20, a21
        for k in range(NT):
            log_partials[c, k] = a[k]


def launch(inp, nchunks: int, out) -> None:
    """Run the kernel on `inp` into the preallocated `out` (reward, terminated, actor, critic, partials).

    Shared float64 constants become float32 here (29 values, once per call) so the row math is float32.
    """
    walk_update_state(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z, inp.feet_pos,
                      inp.feet_quat, inp.contacts, inp.commands, inp.actions, inp.last_actions,
                      inp.gait_phase, inp.air_time, inp.noise, inp.default_angles.astype(np.float32),
                      inp.pose_weights.astype(np.float32), inp.upper_weights.astype(np.float32), inp.scales,
                      inp.params, cos_max_tilt(inp.params), nchunks, bool(inp.observations), *out)
