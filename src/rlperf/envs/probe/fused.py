"""The probe's single fused kernel (variant 3 of workloads.md D), float32 arithmetic throughout.

Unlike the walk kernel (float64 term math), terms and the per-env reward stay float32 as in the reference
probe; only the per-chunk log accumulators are float64. Observations and terminations reuse the walk
kernel's row helpers; rows below `num_done` are also copied into the final-observation buffers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.probe.inputs import TERMS
from rlperf.envs.walk.fused import FASTMATH, is_terminated, swing_height, write_obs_row
from rlperf.envs.walk.inputs import P

NT = len(TERMS)
(T_LIN, T_ANG, T_POSE, T_ANGXY, T_ORI, T_RATE, T_SMOOTH, T_FEET_ORI, T_CLOSE, T_PHASE, T_CONTRAST,
 T_CONTACT, T_DOUBLE, T_HEIGHT, T_ALIVE) = range(NT)
P_DT, P_SIGMA, P_FEET_SIGMA, P_SWING = P["ctrl_dt"], P["tracking_sigma"], P["feet_sigma"], P["swing_height"]
P_MIN_FWD = P["min_forward_speed"]
P_HEIGHT, P_MIN_Z, P_TILT, P_CLOSE = (P["base_height_target"], P["min_base_height"], P["max_tilt_rad"],
                                      P["close_feet_threshold"])
F0, F05, F1, F10 = np.float32(0.0), np.float32(0.5), np.float32(1.0), np.float32(10.0)


@njit(parallel=True, cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
def probe_update_state(linvel, gyro, gravity, dof_pos, dof_vel, base_z, feet_pos, feet_quat, contacts,
                       commands, actions, last_actions, gait_phase, noise, default_angles, pose_weights,
                       scales, params, nchunks, num_done,
                       reward, terminated, actor_obs, critic_obs, log_partials, final_actor, final_critic):
    n = reward.shape[0]
    nj = dof_pos.shape[1]
    sigma = np.float32(params[P_SIGMA])
    feet_sigma = np.float32(params[P_FEET_SIGMA])
    swing = np.float32(params[P_SWING])
    height_target = np.float32(params[P_HEIGHT])
    close_thr = np.float32(params[P_CLOSE])
    ctrl_dt = np.float32(params[P_DT])
    min_fwd = np.float32(params[P_MIN_FWD])
    chunk = (n + nchunks - 1) // nchunks
    for c in prange(nchunks):
        acc = np.zeros(log_partials.shape[1])  # one small allocation per chunk, never per env
        term = np.zeros(NT, dtype=np.float32)
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            ex = commands[i, 0] - linvel[i, 0]
            ey = commands[i, 1] - linvel[i, 1]
            term[T_LIN] = math.exp(-(ex * ex + ey * ey) / sigma)
            ez = commands[i, 2] - gyro[i, 2]
            term[T_ANG] = math.exp(-(ez * ez) / sigma)
            rate = F0
            smooth = F0
            pose = F0
            for j in range(nj):
                d = actions[i, j] - last_actions[i, j]
                rate += d * d
                smooth += actions[i, j] * actions[i, j]
                q = dof_pos[i, j] - np.float32(default_angles[j])
                pose += q * q * np.float32(pose_weights[j])
            term[T_POSE] = math.exp(-pose / (F10 * sigma))
            term[T_ANGXY] = gyro[i, 0] * gyro[i, 0] + gyro[i, 1] * gyro[i, 1]
            term[T_ORI] = gravity[i, 0] * gravity[i, 0] + gravity[i, 1] * gravity[i, 1]
            term[T_RATE] = rate
            term[T_SMOOTH] = smooth
            fo = F0
            for f in range(2):
                fo += feet_quat[i, f, 1] * feet_quat[i, f, 1] + feet_quat[i, f, 2] * feet_quat[i, f, 2]
            term[T_FEET_ORI] = fo
            dx = feet_pos[i, 0, 0] - feet_pos[i, 1, 0]
            dy = feet_pos[i, 0, 1] - feet_pos[i, 1, 1]
            dist = np.float32(math.sqrt(dx * dx + dy * dy))
            term[T_CLOSE] = (dist - close_thr) * (dist - close_thr) if dist < close_thr else F0
            hl = swing_height(gait_phase[i, 0], swing)
            hr = swing_height(gait_phase[i, 1], swing)
            lz = feet_pos[i, 0, 2]
            rz = feet_pos[i, 1, 2]
            el = lz - hl
            er = rz - hr
            gate = max(linvel[i, 0], F0) >= min_fwd
            term[T_PHASE] = math.exp(-(el * el + er * er) / feet_sigma) if gate else F0
            e = (lz - rz) - (hl - hr)
            term[T_CONTRAST] = math.exp(-(e * e) / feet_sigma)
            cl = False
            cr = False
            for s in range(contacts.shape[2]):
                cl = cl or contacts[i, 0, s] > F05
                cr = cr or contacts[i, 1, s] > F05
            half = swing * F05
            term[T_CONTACT] = F05 * ((F1 if cl == (hl <= half) else F0) + (F1 if cr == (hr <= half) else F0))
            term[T_DOUBLE] = max(commands[i, 0], F0) if (cl and cr) else F0
            dz = base_z[i] - height_target
            term[T_HEIGHT] = dz * dz
            term[T_ALIVE] = F1
            total = F0
            for k in range(NT):
                s = scales[k]
                if s != 0.0:
                    w = np.float32(s) * term[k]
                    total += w
                    acc[k] += w
            reward[i] = total * ctrl_dt
            terminated[i] = is_terminated(gravity[i, 2], base_z[i], params[P_TILT], params[P_MIN_Z])
            write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                          default_angles, actor_obs, critic_obs)
            if i < num_done:
                for k in range(actor_obs.shape[1]):
                    final_actor[i, k] = actor_obs[i, k]
                for k in range(critic_obs.shape[1]):
                    final_critic[i, k] = critic_obs[i, k]
        for k in range(log_partials.shape[1]):
            log_partials[c, k] = acc[k]


def launch(inp, nchunks: int, out) -> None:
    """Run the kernel on `inp` into `out` (reward, terminated, actor, critic, partials, final actor, critic)."""
    probe_update_state(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z, inp.feet_pos,
                       inp.feet_quat, inp.contacts, inp.commands, inp.actions, inp.last_actions,
                       inp.gait_phase, inp.noise, inp.default_angles, inp.pose_weights, inp.scales,
                       inp.params, nchunks, inp.num_done, *out)
