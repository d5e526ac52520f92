"""The probe's single fused kernel (variant 3 of docs/workloads.md D): float32 term math, float64 sums.

Terms are float32 as in the reference probe; weights, the per-env reward and the per-chunk log sums are
float64 scalar locals (registers), written once per chunk into the chunked rows of rlperf.envs.base so the
logs are bitwise identical for any thread count. Scales are read at call time (a zero scale is a select,
see rows.weighted). Observations and terminations use the inlined walk row helpers (NaN/inf-safe, no
nnan/ninf fastmath); the 2% final-observation copy runs per chunk after its env loop, outside the hot loop.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.probe.inputs import TERMS
from rlperf.envs.walk.inputs import P
from rlperf.envs.walk.reference import cos_max_tilt
from rlperf.envs.walk.rows import F0, F05, F1, FASTMATH, foot_contact, is_terminated, swing_height, weighted, \
    write_obs_row

NT = len(TERMS)
(T_LIN, T_ANG, T_POSE, T_ANGXY, T_ORI, T_RATE, T_SMOOTH, T_FEET_ORI, T_CLOSE, T_PHASE, T_CONTRAST,
 T_CONTACT, T_DOUBLE, T_HEIGHT, T_ALIVE) = range(NT)
P_DT, P_SIGMA, P_FEET_SIGMA, P_SWING = P["ctrl_dt"], P["tracking_sigma"], P["feet_sigma"], P["swing_height"]
P_MIN_FWD, P_HEIGHT, P_MIN_Z, P_CLOSE = (P["min_forward_speed"], P["base_height_target"], P["min_base_height"],
                                         P["close_feet_threshold"])
F10 = np.float32(10.0)


@njit(parallel=True, cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
def probe_update_state(linvel, gyro, gravity, dof_pos, dof_vel, base_z, feet_pos, feet_quat, contacts,
                       commands, actions, last_actions, gait_phase, noise, default_angles, pose_weights,
                       scales, params, cos_tilt, nchunks, num_done,
                       reward, terminated, actor_obs, critic_obs, log_partials, final_actor, final_critic):
    n = reward.shape[0]
    nj = dof_pos.shape[1]
    sigma = np.float32(params[P_SIGMA])
    feet_sigma = np.float32(params[P_FEET_SIGMA])
    swing = np.float32(params[P_SWING])
    height_target = np.float32(params[P_HEIGHT])
    close_thr = np.float32(params[P_CLOSE])
    min_fwd = np.float32(params[P_MIN_FWD])
    ctrl_dt, min_z = params[P_DT], params[P_MIN_Z]
    s = scales
    chunk = (n + nchunks - 1) // nchunks
    for c in prange(nchunks):
        lo, hi = c * chunk, min(n, (c + 1) * chunk)
        a = np.zeros(NT)  # receives a0..a14 once per chunk
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = a9 = a10 = a11 = a12 = a13 = a14 = 0.0
        for i in range(lo, hi):
            ex = commands[i, 0] - linvel[i, 0]
            ey = commands[i, 1] - linvel[i, 1]
            ez = commands[i, 2] - gyro[i, 2]
            rate = F0
            smooth = F0
            pose = F0
            for j in range(nj):
                d = actions[i, j] - last_actions[i, j]
                rate += d * d
                smooth += actions[i, j] * actions[i, j]
                q = dof_pos[i, j] - default_angles[j]
                pose += q * q * pose_weights[j]
            feet_ori = (feet_quat[i, 0, 1] * feet_quat[i, 0, 1] + feet_quat[i, 0, 2] * feet_quat[i, 0, 2]
                        + feet_quat[i, 1, 1] * feet_quat[i, 1, 1] + feet_quat[i, 1, 2] * feet_quat[i, 1, 2])
            dx = feet_pos[i, 0, 0] - feet_pos[i, 1, 0]
            dy = feet_pos[i, 0, 1] - feet_pos[i, 1, 1]
            dist = np.float32(math.sqrt(dx * dx + dy * dy))
            t_close = (dist - close_thr) * (dist - close_thr) if dist < close_thr else F0
            hl = swing_height(gait_phase[i, 0], swing)
            hr = swing_height(gait_phase[i, 1], swing)
            lz = feet_pos[i, 0, 2]
            rz = feet_pos[i, 1, 2]
            el = lz - hl
            er = rz - hr
            gate = max(linvel[i, 0], F0) >= min_fwd
            e = (lz - rz) - (hl - hr)
            cl = foot_contact(contacts, i, 0)
            cr = foot_contact(contacts, i, 1)
            half = swing * F05
            dz = base_z[i] - height_target

            w0 = weighted(s[T_LIN], math.exp(-(ex * ex + ey * ey) / sigma))
            w1 = weighted(s[T_ANG], math.exp(-(ez * ez) / sigma))
            w2 = weighted(s[T_POSE], math.exp(-pose / (F10 * sigma)))
            w3 = weighted(s[T_ANGXY], gyro[i, 0] * gyro[i, 0] + gyro[i, 1] * gyro[i, 1])
            w4 = weighted(s[T_ORI], gravity[i, 0] * gravity[i, 0] + gravity[i, 1] * gravity[i, 1])
            w5 = weighted(s[T_RATE], rate)
            w6 = weighted(s[T_SMOOTH], smooth)
            w7 = weighted(s[T_FEET_ORI], feet_ori)
            w8 = weighted(s[T_CLOSE], t_close)
            w9 = weighted(s[T_PHASE], math.exp(-(el * el + er * er) / feet_sigma) if gate else F0)
            w10 = weighted(s[T_CONTRAST], math.exp(-(e * e) / feet_sigma))
            w11 = weighted(s[T_CONTACT], F05 * ((F1 if cl == (hl <= half) else F0) + (F1 if cr == (hr <= half) else F0)))
            w12 = weighted(s[T_DOUBLE], max(commands[i, 0], F0) if (cl and cr) else F0)
            w13 = weighted(s[T_HEIGHT], dz * dz)
            w14 = weighted(s[T_ALIVE], F1)
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
            total = (((w0 + w1) + (w2 + w3)) + ((w4 + w5) + (w6 + w7)) + ((w8 + w9) + (w10 + w11))
                     + ((w12 + w13) + w14))
            reward[i] = np.float32(total * ctrl_dt)
            terminated[i] = is_terminated(gravity[i, 2], base_z[i], cos_tilt, min_z)
            write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                          default_angles, actor_obs, critic_obs)
        for i in range(lo, min(hi, num_done)):  # final-observation copy of this chunk's done rows
            for k in range(actor_obs.shape[1]):
                final_actor[i, k] = actor_obs[i, k]
            for k in range(critic_obs.shape[1]):
                final_critic[i, k] = critic_obs[i, k]
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
        a[8], a[9], a[10], a[11], a[12], a[13], a[14] = a8, a9, a10, a11, a12, a13, a14
        for k in range(NT):
            log_partials[c, k] = a[k]


def launch(inp, nchunks: int, out) -> None:
    """Run the kernel on `inp` into `out` (reward, terminated, actor, critic, partials, final actor, critic).

    Shared float64 constants become float32 here (29 values, once per call) so the row math is float32.
    """
    probe_update_state(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z, inp.feet_pos,
                       inp.feet_quat, inp.contacts, inp.commands, inp.actions, inp.last_actions,
                       inp.gait_phase, inp.noise, inp.default_angles.astype(np.float32),
                       inp.pose_weights.astype(np.float32), inp.scales, inp.params, cos_max_tilt(inp.params),
                       nchunks, inp.num_done, *out)
