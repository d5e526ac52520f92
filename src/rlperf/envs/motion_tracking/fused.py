"""Fused Numba `update_state` for g1_motion_tracking: one parallel pass over envs (docs/workloads.md C4).

Shape of the kernel (docs/limits.md 3):
* `prange` over a fixed number of chunks (an argument, chosen from the env count only), then a
  serial loop over the envs of each chunk. Each chunk sums its 12 weighted terms in a local float64
  accumulator and writes one padded row of `logs`; the host reduces rows in chunk order, so logs
  are bitwise identical for any thread count.
* No allocation inside the env loop: per-env math is scalar locals and tuple-returning
  `inline='always'` helpers. The only allocations are two 12-wide float64 arrays (accumulator and
  1/std^2) at the start of each chunk, outside the env loop (checked in `_run_chunk.inspect_llvm()`).
* Scales, stds and thresholds are float64 arrays read at call time: a new profile never recompiles.
* fastmath is limited to {'reassoc', 'contract', 'arcp', 'nsz'} so NaN/inf survive; terminations
  live in `_terminated`, compiled without fastmath and in float32, so every threshold comparison
  sees the same bits as the float32 numpy reference (contraction or reassociation of
  `(m_z - a_z) + a_z` could otherwise flip a boolean at the threshold).
* Module-level kernels with `cache=True`; the chunk count is an argument (never `get_num_threads()`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.motion_tracking.inputs import MotionTrackingInputs
from rlperf.envs.motion_tracking.profiles import ANCHOR, CONTACT_Z, NUM_BODIES, NUM_DOF, NUM_TERMS

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
_OPTS = dict(cache=True, nogil=True, error_model="numpy")

_A = ANCHOR
_NB = NUM_BODIES
_ND = NUM_DOF
_NT = NUM_TERMS


@njit(inline="always", fastmath=FASTMATH, **_OPTS)
def _quat_mul(aw, ax, ay, az, bw, bx, by, bz):
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


@njit(inline="always", fastmath=FASTMATH, **_OPTS)
def _ori_error(dot):
    """(2 acos(clip(|dot|, 0, 1)))^2; NaN passes through as in numpy.

    acos runs in float32 (acosf), like the reference: 6% faster per env than double acos, and the
    result is summed into a float64 accumulator.
    """
    d = np.float32(abs(dot))
    if d > np.float32(1.0):
        d = np.float32(1.0)
    e = np.float32(2.0) * math.acos(d)
    return e * e


@njit(**_OPTS)
def _terminated(i, mp, mq, rp, rq, thresh):
    """Termination OR in float32 with numpy's operation order; compiled without fastmath on purpose."""
    one = np.float32(1.0)
    two = np.float32(2.0)
    a_z = mp[i, _A, 2]
    if abs(a_z - rp[i, _A, 2]) > np.float32(thresh[0]):
        return True
    if thresh[1] < 2.0:
        gz_a = two * (mq[i, _A, 1] * mq[i, _A, 1] + mq[i, _A, 2] * mq[i, _A, 2]) - one
        gz_r = two * (rq[i, _A, 1] * rq[i, _A, 1] + rq[i, _A, 2] * rq[i, _A, 2]) - one
        if abs(gz_a - gz_r) > np.float32(thresh[1]):
            return True
    ee_thr = np.float32(thresh[2])
    for b in (3, 6, 10, 13):
        ref_z = (mp[i, b, 2] - a_z) + a_z
        if abs(ref_z - rp[i, b, 2]) > ee_thr:
            return True
    if thresh[3] != 0.0:
        contact_z = np.float32(CONTACT_Z)
        for b in (0, 1, 2, 4, 5, 7, 8, 9, 11, 12):
            if rp[i, b, 2] < contact_z:
                return True
    return False


@njit(fastmath=FASTMATH, **_OPTS)
def _run_chunk(
    c, lo, hi,
    mjp, mjv, mp, mq, mlv, mav, rp, rq, rlv, rav,
    linvel, gyro, dof_pos, dof_vel, cur_act, last_act,
    default_angles, joint_lo, joint_hi,
    n_lin, n_gyro, n_jp, n_jv,
    scale, std, thresh, ctrl_dt,
    reward, terminated, actor, critic, logs,
):  # fmt: skip
    """All of update_state for envs [lo, hi); one row of weighted-term sums into logs[c]."""
    acc = np.zeros(_NT)
    inv_std2 = np.zeros(_NT)
    for k in range(_NT):
        if std[k] > 0.0:
            inv_std2[k] = 1.0 / (std[k] * std[k])
    use_root_ori = scale[1] != 0.0
    use_body_ori = scale[3] != 0.0
    use_joint_limit = scale[10] != 0.0
    contact_z = np.float32(CONTACT_Z)

    for i in range(lo, hi):
        a_px, a_py, a_pz = float(mp[i, _A, 0]), float(mp[i, _A, 1]), float(mp[i, _A, 2])
        a_qw, a_qx, a_qy, a_qz = float(mq[i, _A, 0]), float(mq[i, _A, 1]), float(mq[i, _A, 2]), float(mq[i, _A, 3])
        r_px, r_py, r_pz = float(rp[i, _A, 0]), float(rp[i, _A, 1]), float(rp[i, _A, 2])
        r_qw, r_qx, r_qy, r_qz = float(rq[i, _A, 0]), float(rq[i, _A, 1]), float(rq[i, _A, 2]), float(rq[i, _A, 3])

        # R(r_q), shared by anchor_pos_b and the critic body positions
        r00 = 1.0 - 2.0 * (r_qy * r_qy + r_qz * r_qz)
        r01 = 2.0 * (r_qx * r_qy - r_qw * r_qz)
        r02 = 2.0 * (r_qx * r_qz + r_qw * r_qy)
        r10 = 2.0 * (r_qx * r_qy + r_qw * r_qz)
        r11 = 1.0 - 2.0 * (r_qx * r_qx + r_qz * r_qz)
        r12 = 2.0 * (r_qy * r_qz - r_qw * r_qx)
        r20 = 2.0 * (r_qx * r_qz - r_qw * r_qy)
        r21 = 2.0 * (r_qy * r_qz + r_qw * r_qx)
        r22 = 1.0 - 2.0 * (r_qx * r_qx + r_qy * r_qy)

        # yaw of r_q * conj(a_q) as the half-angle quaternion d = (dw, 0, 0, dz)
        qw, qx, qy, qz = _quat_mul(r_qw, r_qx, r_qy, r_qz, a_qw, -a_qx, -a_qy, -a_qz)
        half_yaw = 0.5 * math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
        dw = math.cos(half_yaw)
        dz = math.sin(half_yaw)
        s = 2.0 * dw * dz
        cc = 2.0 * dz * dz

        # motion anchor in the robot-anchor frame (actor and critic)
        ex, ey, ez = a_px - r_px, a_py - r_py, a_pz - r_pz
        root_pos_err = ex * ex + ey * ey + ez * ez
        apb0 = r00 * ex + r10 * ey + r20 * ez
        apb1 = r01 * ex + r11 * ey + r21 * ez
        apb2 = r02 * ex + r12 * ey + r22 * ez
        tw, tx, ty, tz = _quat_mul(r_qw, -r_qx, -r_qy, -r_qz, a_qw, a_qx, a_qy, a_qz)
        ao0 = 1.0 - 2.0 * (ty * ty + tz * tz)
        ao1 = 2.0 * (tx * ty - tw * tz)
        ao2 = 2.0 * (tx * ty + tw * tz)
        ao3 = 1.0 - 2.0 * (tx * tx + tz * tz)
        ao4 = 2.0 * (tx * tz - tw * ty)
        ao5 = 2.0 * (ty * tz + tw * tx)
        actor[i, 58] = critic[i, 58] = apb0
        actor[i, 59] = critic[i, 59] = apb1
        actor[i, 60] = critic[i, 60] = apb2
        actor[i, 61] = critic[i, 61] = ao0
        actor[i, 62] = critic[i, 62] = ao1
        actor[i, 63] = critic[i, 63] = ao2
        actor[i, 64] = critic[i, 64] = ao3
        actor[i, 65] = critic[i, 65] = ao4
        actor[i, 66] = critic[i, 66] = ao5

        root_ori_err = 0.0
        if use_root_ori:
            root_ori_err = _ori_error(a_qw * r_qw + a_qx * r_qx + a_qy * r_qy + a_qz * r_qz)

        body_pos_err = 0.0
        body_ori_err = 0.0
        lin_err = 0.0
        ang_err = 0.0
        ee_err = 0.0
        contacts = 0.0
        for b in range(_NB):
            vx = float(mp[i, b, 0]) - a_px
            vy = float(mp[i, b, 1]) - a_py
            vz = float(mp[i, b, 2]) - a_pz
            bx, by, bz = float(rp[i, b, 0]), float(rp[i, b, 1]), float(rp[i, b, 2])
            px = vx - s * vy - cc * vx + r_px - bx
            py = vy + s * vx - cc * vy + r_py - by
            pz = vz + a_pz - bz
            body_pos_err += px * px + py * py + pz * pz
            if b == 3 or b == 6 or b == 10 or b == 13:
                ee_err += pz * pz
            elif rp[i, b, 2] < contact_z:
                contacts += 1.0

            bw, bqx, bqy, bqz = float(rq[i, b, 0]), float(rq[i, b, 1]), float(rq[i, b, 2]), float(rq[i, b, 3])
            if use_body_ori:
                mw, mx, my, mz = float(mq[i, b, 0]), float(mq[i, b, 1]), float(mq[i, b, 2]), float(mq[i, b, 3])
                dot = (
                    (dw * mw - dz * mz) * bw
                    + (dw * mx - dz * my) * bqx
                    + (dw * my + dz * mx) * bqy
                    + (dw * mz + dz * mw) * bqz
                )
                body_ori_err += _ori_error(dot)

            for k in range(3):
                dl = float(mlv[i, b, k]) - float(rlv[i, b, k])
                da = float(mav[i, b, k]) - float(rav[i, b, k])
                lin_err += dl * dl
                ang_err += da * da

            # critic: body pose in the robot-anchor frame
            ox, oy, oz = bx - r_px, by - r_py, bz - r_pz
            o = 160 + 3 * b
            critic[i, o] = r00 * ox + r10 * oy + r20 * oz
            critic[i, o + 1] = r01 * ox + r11 * oy + r21 * oz
            critic[i, o + 2] = r02 * ox + r12 * oy + r22 * oz
            tw, tx, ty, tz = _quat_mul(r_qw, -r_qx, -r_qy, -r_qz, bw, bqx, bqy, bqz)
            o = 202 + 6 * b
            critic[i, o] = 1.0 - 2.0 * (ty * ty + tz * tz)
            critic[i, o + 1] = 2.0 * (tx * ty - tw * tz)
            critic[i, o + 2] = 2.0 * (tx * ty + tw * tz)
            critic[i, o + 3] = 1.0 - 2.0 * (tx * tx + tz * tz)
            critic[i, o + 4] = 2.0 * (tx * tz - tw * ty)
            critic[i, o + 5] = 2.0 * (ty * tz + tw * tx)

        jp_err = 0.0
        jv_err = 0.0
        act_rate = 0.0
        limit = 0.0
        for j in range(_ND):
            mq_j = mjp[i, j]
            mv_j = mjv[i, j]
            q = float(dof_pos[i, j])
            dq = dof_vel[i, j]
            a_j = cur_act[i, j]
            e = float(mq_j) - q
            jp_err += e * e
            e = float(mv_j) - float(dq)
            jv_err += e * e
            e = float(a_j) - float(last_act[i, j])
            act_rate += e * e
            if use_joint_limit:
                e = max(joint_lo[j] - q, 0.0) + max(q - joint_hi[j], 0.0)
                limit += e * e
            rel = q - default_angles[j]
            actor[i, j] = critic[i, j] = mq_j
            actor[i, 29 + j] = critic[i, 29 + j] = mv_j
            critic[i, 73 + j] = rel
            actor[i, 73 + j] = rel + n_jp[i, j]
            critic[i, 102 + j] = dq
            actor[i, 102 + j] = dq + n_jv[i, j]
            actor[i, 131 + j] = critic[i, 131 + j] = a_j

        for k in range(3):
            lv = linvel[i, k]
            g = gyro[i, k]
            critic[i, 67 + k] = critic[i, 286 + k] = lv
            critic[i, 70 + k] = g
            actor[i, 67 + k] = lv + n_lin[i, k]
            actor[i, 70 + k] = g + n_gyro[i, k]

        # weighted terms in slot order; zero scales are skipped (no exp, no log contribution)
        inv_b = 1.0 / _NB
        inv_d = 1.0 / _ND
        total = 0.0
        if scale[0] != 0.0:
            w = scale[0] * math.exp(-root_pos_err * inv_std2[0])
            total += w
            acc[0] += w
        if use_root_ori:
            w = scale[1] * math.exp(-root_ori_err * inv_std2[1])
            total += w
            acc[1] += w
        if scale[2] != 0.0:
            w = scale[2] * math.exp(-body_pos_err * inv_b * inv_std2[2])
            total += w
            acc[2] += w
        if use_body_ori:
            w = scale[3] * math.exp(-body_ori_err * inv_b * inv_std2[3])
            total += w
            acc[3] += w
        if scale[4] != 0.0:
            w = scale[4] * math.exp(-lin_err * inv_b * inv_std2[4])
            total += w
            acc[4] += w
        if scale[5] != 0.0:
            w = scale[5] * math.exp(-ang_err * inv_b * inv_std2[5])
            total += w
            acc[5] += w
        if scale[6] != 0.0:
            w = scale[6] * math.exp(-ee_err * 0.25 * inv_std2[6])
            total += w
            acc[6] += w
        if scale[7] != 0.0:
            w = scale[7] * math.exp(-jp_err * inv_d * inv_std2[7])
            total += w
            acc[7] += w
        if scale[8] != 0.0:
            w = scale[8] * math.exp(-jv_err * inv_d * inv_std2[8])
            total += w
            acc[8] += w
        if scale[9] != 0.0:
            w = scale[9] * act_rate
            total += w
            acc[9] += w
        if use_joint_limit:
            w = scale[10] * limit
            total += w
            acc[10] += w
        if scale[11] != 0.0:
            w = scale[11] * contacts
            total += w
            acc[11] += w
        reward[i] = total * ctrl_dt
        terminated[i] = _terminated(i, mp, mq, rp, rq, thresh)

    for k in range(_NT):
        logs[c, k] = acc[k]


@njit(parallel=True, fastmath=FASTMATH, **_OPTS)
def update_state_kernel(
    nchunks,
    mjp, mjv, mp, mq, mlv, mav, rp, rq, rlv, rav,
    linvel, gyro, dof_pos, dof_vel, cur_act, last_act,
    default_angles, joint_lo, joint_hi,
    n_lin, n_gyro, n_jp, n_jv,
    scale, std, thresh, ctrl_dt,
    reward, terminated, actor, critic, logs,
):  # fmt: skip
    """Run every env once; chunk c covers envs [c*n//nchunks, (c+1)*n//nchunks)."""
    n = reward.shape[0]
    for c in prange(nchunks):
        _run_chunk(
            c, c * n // nchunks, (c + 1) * n // nchunks,
            mjp, mjv, mp, mq, mlv, mav, rp, rq, rlv, rav,
            linvel, gyro, dof_pos, dof_vel, cur_act, last_act,
            default_angles, joint_lo, joint_hi,
            n_lin, n_gyro, n_jp, n_jv,
            scale, std, thresh, ctrl_dt,
            reward, terminated, actor, critic, logs,
        )  # fmt: skip


def kernel_args(inp: MotionTrackingInputs) -> tuple:
    """The kernel's positional arguments for `inp`, in signature order."""
    prof = inp.profile
    return (
        inp.nchunks,
        inp.motion_joint_pos, inp.motion_joint_vel,
        inp.motion_body_pos, inp.motion_body_quat, inp.motion_body_lin_vel, inp.motion_body_ang_vel,
        inp.robot_body_pos, inp.robot_body_quat, inp.robot_body_lin_vel, inp.robot_body_ang_vel,
        inp.linvel, inp.gyro, inp.dof_pos, inp.dof_vel, inp.current_actions, inp.last_actions,
        inp.default_angles, inp.joint_lower, inp.joint_upper,
        inp.noise_linvel, inp.noise_gyro, inp.noise_joint_pos, inp.noise_dof_vel,
        prof.scale_array(), prof.std_array(), prof.threshold_array(), float(prof.ctrl_dt),
        inp.reward, inp.terminated, inp.actor_obs, inp.critic_obs, inp.logs,
    )  # fmt: skip
