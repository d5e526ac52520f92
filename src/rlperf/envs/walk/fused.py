"""The fused g1_walk_flat update_state kernel: one parallel pass over envs (Numba).

Per env, in order: terms (float64 math on float32 state, zero-scale terms skipped), reward, termination,
actor and critic observations. Scales and thresholds are runtime float64 vectors (a new profile never
recompiles); per-term log sums use the chunked scheme of rlperf.envs.base; the thread count is set by the
launcher, never read here; fastmath leaves out nnan/ninf so NaN and inf rows terminate as in numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.walk.inputs import P, TERMS

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
NT = len(TERMS)
(T_LIN, T_ANG, T_P_ANGXY, T_ANGXY, T_P_ORI, T_ORI, T_P_RATE, T_RATE, T_POSE, T_UPPER, T_FEET_ORI,
 T_PHASE, T_ALIVE, T_HEIGHT, T_CLOSE, T_CONTACT, T_DOUBLE, T_AIR, T_FWD, T_UNDER, T_LINZ,
 T_CONTRAST) = range(NT)
P_DT, P_SIGMA, P_FEET_SIGMA, P_SWING = P["ctrl_dt"], P["tracking_sigma"], P["feet_sigma"], P["swing_height"]
P_HEIGHT, P_MIN_Z, P_TILT, P_CLOSE = (P["base_height_target"], P["min_base_height"], P["max_tilt_rad"],
                                      P["close_feet_threshold"])
P_MIN_FWD, P_AIR_LO, P_AIR_HI = P["min_forward_speed"], P["air_time_min"], P["air_time_max"]
OBS_GYRO, OBS_DOF_VEL, OBS_LINVEL = np.float32(0.25), np.float32(0.05), np.float32(2.0)
TWO_PI32, PI32 = np.float32(2 * np.pi), np.float32(np.pi)


@njit(cache=True, fastmath=FASTMATH, nogil=True)
def swing_height(phase, swing):
    """Foot height target (C3), in float32 like the reference so stance thresholds agree."""
    x = np.fmod(np.float32(phase + PI32), TWO_PI32) / TWO_PI32
    if x <= np.float32(0.5):
        t = np.float32(2) * x
        return swing * (t * t * t + np.float32(3) * t * t * (np.float32(1) - t))
    t = np.float32(2) * x - np.float32(1)
    return swing * (np.float32(1) - (t * t * t + np.float32(3) * t * t * (np.float32(1) - t)))


@njit(cache=True, fastmath=FASTMATH, nogil=True)
def foot_contact(contacts, i, foot):
    for s in range(contacts.shape[2]):
        if contacts[i, foot, s] > 0.5:
            return True
    return False


@njit(cache=True, fastmath=FASTMATH, nogil=True)
def is_terminated(gravity_z, base_z, max_tilt, min_z):
    """Tilt > max_tilt OR base below min_z OR either non-finite; float64, NaN-safe (no nnan fastmath)."""
    gz = float(gravity_z)
    bz = float(base_z)
    if not (math.isfinite(gz) and math.isfinite(bz)):
        return True
    gz = min(max(gz, -1.0), 1.0)
    return math.acos(gz) > max_tilt or bz < min_z


@njit(cache=True, fastmath=FASTMATH, nogil=True)
def write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                  default_angles, actor_obs, critic_obs):
    """Actor (98, noise then scale) and critic (101, clean + linvel) walk-layout rows for env i (C3)."""
    for k in range(3):
        actor_obs[i, k] = (gyro[i, k] + noise[i, k]) * OBS_GYRO
        actor_obs[i, 3 + k] = -(gravity[i, k] + noise[i, 3 + k])
        critic_obs[i, k] = gyro[i, k] * OBS_GYRO
        critic_obs[i, 3 + k] = -gravity[i, k]
        actor_obs[i, 93 + k] = commands[i, k]
        critic_obs[i, 93 + k] = commands[i, k]
        critic_obs[i, 98 + k] = linvel[i, k] * OBS_LINVEL
    for j in range(dof_pos.shape[1]):
        q = dof_pos[i, j] - default_angles[j]  # float64, as in the reference
        actor_obs[i, 6 + j] = q + noise[i, 6 + j]
        critic_obs[i, 6 + j] = q
        actor_obs[i, 35 + j] = (dof_vel[i, j] + noise[i, 35 + j]) * OBS_DOF_VEL
        critic_obs[i, 35 + j] = dof_vel[i, j] * OBS_DOF_VEL
        actor_obs[i, 64 + j] = actions[i, j]
        critic_obs[i, 64 + j] = actions[i, j]
    for f in range(2):
        actor_obs[i, 96 + f] = gait_phase[i, f]
        critic_obs[i, 96 + f] = gait_phase[i, f]


@njit(parallel=True, cache=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
def walk_update_state(linvel, gyro, gravity, dof_pos, dof_vel, base_z, feet_pos, feet_quat, contacts,
                      commands, actions, last_actions, gait_phase, air_time, noise,
                      default_angles, pose_weights, upper_weights, scales, params, nchunks, write_obs,
                      reward, terminated, actor_obs, critic_obs, log_partials):
    n = reward.shape[0]
    nj = dof_pos.shape[1]
    sigma, feet_sigma = params[P_SIGMA], params[P_FEET_SIGMA]
    swing = np.float32(params[P_SWING])
    air_lo, air_hi = np.float32(params[P_AIR_LO]), np.float32(params[P_AIR_HI])
    need_heights = scales[T_PHASE] != 0.0 or scales[T_CONTACT] != 0.0 or scales[T_CONTRAST] != 0.0
    need_contact = scales[T_CONTACT] != 0.0 or scales[T_DOUBLE] != 0.0
    chunk = (n + nchunks - 1) // nchunks
    for c in prange(nchunks):
        acc = np.zeros(log_partials.shape[1])  # one small allocation per chunk, never per env
        term = np.zeros(NT)
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            ex = float(commands[i, 0]) - linvel[i, 0]
            ey = float(commands[i, 1]) - linvel[i, 1]
            term[T_LIN] = math.exp(-(ex * ex + ey * ey) / sigma)
            ez = float(commands[i, 2]) - gyro[i, 2]
            term[T_ANG] = math.exp(-(ez * ez) / sigma)
            angxy = float(gyro[i, 0]) * gyro[i, 0] + float(gyro[i, 1]) * gyro[i, 1]
            term[T_P_ANGXY] = angxy
            term[T_ANGXY] = angxy
            ori = float(gravity[i, 0]) * gravity[i, 0] + float(gravity[i, 1]) * gravity[i, 1]
            term[T_P_ORI] = ori
            term[T_ORI] = ori
            rate = 0.0
            pose = 0.0
            upper = 0.0
            for j in range(nj):
                d = float(actions[i, j]) - last_actions[i, j]
                rate += d * d
                q = float(dof_pos[i, j]) - default_angles[j]
                pose += pose_weights[j] * q * q
                upper += upper_weights[j] * q * q
            term[T_P_RATE] = rate
            term[T_RATE] = rate
            term[T_POSE] = pose
            term[T_UPPER] = upper
            fo = 0.0
            for f in range(2):
                fo += float(feet_quat[i, f, 1]) * feet_quat[i, f, 1] + float(feet_quat[i, f, 2]) * feet_quat[i, f, 2]
            term[T_FEET_ORI] = fo
            term[T_ALIVE] = 1.0
            dz = float(base_z[i]) - params[P_HEIGHT]
            term[T_HEIGHT] = dz * dz
            lz = float(feet_pos[i, 0, 2])
            rz = float(feet_pos[i, 1, 2])
            hl = 0.0
            hr = 0.0
            if need_heights:
                hl = float(swing_height(gait_phase[i, 0], swing))
                hr = float(swing_height(gait_phase[i, 1], swing))
            if scales[T_PHASE] != 0.0:
                gate = max(float(linvel[i, 0]), 0.0) >= params[P_MIN_FWD]
                el = lz - hl
                er = rz - hr
                term[T_PHASE] = math.exp(-(el * el + er * er) / feet_sigma) if gate else 0.0
            if scales[T_CLOSE] != 0.0:
                dx = float(feet_pos[i, 0, 0]) - feet_pos[i, 1, 0]
                dy = float(feet_pos[i, 0, 1]) - feet_pos[i, 1, 1]
                dist = math.sqrt(dx * dx + dy * dy)
                thr = params[P_CLOSE]
                term[T_CLOSE] = (dist - thr) * (dist - thr) if dist < thr else 0.0
            cl = False
            cr = False
            if need_contact:
                cl = foot_contact(contacts, i, 0)
                cr = foot_contact(contacts, i, 1)
            if scales[T_CONTACT] != 0.0:
                half = swing * np.float32(0.5)
                sl = np.float32(hl) <= half
                sr = np.float32(hr) <= half
                term[T_CONTACT] = 0.5 * ((1.0 if cl == sl else 0.0) + (1.0 if cr == sr else 0.0))
            if scales[T_DOUBLE] != 0.0:
                term[T_DOUBLE] = max(float(commands[i, 0]), 0.0) if (cl and cr) else 0.0
            if scales[T_AIR] != 0.0:
                count = 0.0
                for f in range(2):
                    t = air_time[i, f]
                    if t > air_lo and t < air_hi:  # float32 compares, as in the reference
                        count += 1.0
                term[T_AIR] = count
            vx = float(linvel[i, 0])
            cx = max(float(commands[i, 0]), 0.0)
            term[T_FWD] = min(max(vx, 0.0), cx)
            under = max(float(commands[i, 0]) - vx, 0.0)
            term[T_UNDER] = under * under
            term[T_LINZ] = float(linvel[i, 2]) * linvel[i, 2]
            if scales[T_CONTRAST] != 0.0:
                e = (lz - rz) - (hl - hr)
                term[T_CONTRAST] = math.exp(-(e * e) / feet_sigma)
            total = 0.0
            for k in range(NT):
                s = scales[k]
                if s != 0.0:
                    w = s * term[k]
                    total += w
                    acc[k] += w
            reward[i] = np.float32(total * params[P_DT])

            terminated[i] = is_terminated(gravity[i, 2], base_z[i], params[P_TILT], params[P_MIN_Z])
            if write_obs:
                write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                              default_angles, actor_obs, critic_obs)
        for k in range(log_partials.shape[1]):
            log_partials[c, k] = acc[k]


def launch(inp, nchunks: int, out) -> None:
    """Run the kernel on `inp` into the preallocated `out` (reward, terminated, actor, critic, partials)."""
    walk_update_state(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z, inp.feet_pos,
                      inp.feet_quat, inp.contacts, inp.commands, inp.actions, inp.last_actions,
                      inp.gait_phase, inp.air_time, inp.noise, inp.default_angles, inp.pose_weights,
                      inp.upper_weights, inp.scales, inp.params, nchunks, bool(inp.observations), *out)
