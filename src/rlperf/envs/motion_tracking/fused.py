"""Fused Numba `update_state` for g1_motion_tracking: one parallel pass over envs (docs/workloads.md C4).

Shape of the kernel (docs/limits.md 3; the one-thread cost is recorded in docs/kernel-profile.md, MT):
* `prange` over a fixed number of chunks (an argument, chosen from the env count only), then a
  serial loop over the envs of each chunk. Each chunk sums its 12 weighted terms in float64 scalar
  locals and writes one padded row of `logs`; the host reduces rows in chunk order, so logs are
  bitwise identical for any thread count.
* No allocation inside the env loop: per-env math is float32 scalar locals (the reference's
  precision) and `inline='always'` helpers from `rows` (no libm call but expf). The only allocations
  are two 12-wide arrays (exp coefficients, active flags) at the start of each chunk.
* Scales, stds and thresholds are float64 arrays read at call time: a new profile never recompiles.
* fastmath is limited to {'reassoc', 'contract', 'arcp', 'nsz'} so NaN/inf survive. Terminations must
  match the float32 reference bit for bit at the threshold, which reordered math cannot promise, so a
  comparison is taken in the loop only where `_sure` certifies it (a gap of 50x the reference's
  rounding); NaN/inf and near-threshold rows call `_terminated`, compiled without fastmath in numpy's
  operation order.
* Module-level kernels with `cache=True`; the chunk count is an argument (never `get_num_threads()`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rlperf.envs.motion_tracking.inputs import MotionTrackingInputs
from rlperf.envs.motion_tracking.profiles import ANCHOR, CONTACT_Z, NUM_BODIES, NUM_DOF, NUM_TERMS
from rlperf.envs.motion_tracking.rows import F0, F1, F2, half_yaw, ori_error, quat_mul

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
_OPTS = dict(cache=True, nogil=True, error_model="numpy")

_A = ANCHOR
_NB = NUM_BODIES
_ND = NUM_DOF
_NT = NUM_TERMS
_CZ = np.float32(CONTACT_Z)


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


@njit(inline="always", fastmath=FASTMATH, **_OPTS)
def _sure(q, thr, size):
    """Whether q's side of thr is the same as the strict float32 reference's, computed under fastmath.

    `q` is a termination quantity computed here with any operation order; the reference's value of
    it differs by a few float32 rounding steps of `size` (the sum of the magnitudes that enter it,
    ~2e-7 * size). A gap of more than 1e-5 * size (50x that) decides; NaN and inf never do (the
    comparison is false), and those rows, like the rare near-threshold ones, take the strict path.
    """
    return abs(q - thr) > np.float32(1e-5) * size


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
    """All of update_state for envs [lo, hi); one row of weighted-term sums into logs[c].

    Per-env math is float32 (the reference's precision; no float64 promotion of the loaded values);
    weights, reward and the 12 chunk sums are float64 scalar locals (not an array: they stay in
    registers), copied into logs[c] once per chunk.
    """
    # exp(-err / std^2) coefficients, mean factors folded in, as float32 (exp runs as expf)
    k = np.zeros(_NT)
    for t in range(_NT):
        if std[t] > 0.0:
            k[t] = -1.0 / (std[t] * std[t])
    k0, k1 = np.float32(k[0]), np.float32(k[1])
    k2, k3 = np.float32(k[2] / _NB), np.float32(k[3] / _NB)
    k4, k5 = np.float32(k[4] / _NB), np.float32(k[5] / _NB)
    k6, k7, k8 = np.float32(k[6] * 0.25), np.float32(k[7] / _ND), np.float32(k[8] / _ND)
    on = scale != 0.0
    on0, on1, on2, on3, on4, on5 = on[0], on[1], on[2], on[3], on[4], on[5]
    on6, on7, on8, on9, on10, on11 = on[6], on[7], on[8], on[9], on[10], on[11]
    thr_z, thr_ori, thr_ee = np.float32(thresh[0]), np.float32(thresh[1]), np.float32(thresh[2])
    check_ori = thresh[1] < 2.0
    contact_term = thresh[3] != 0.0
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = s11 = 0.0

    for i in range(lo, hi):
        a_px, a_py, a_pz = mp[i, _A, 0], mp[i, _A, 1], mp[i, _A, 2]
        a_qw, a_qx, a_qy, a_qz = mq[i, _A, 0], mq[i, _A, 1], mq[i, _A, 2], mq[i, _A, 3]
        r_px, r_py, r_pz = rp[i, _A, 0], rp[i, _A, 1], rp[i, _A, 2]
        r_qw, r_qx, r_qy, r_qz = rq[i, _A, 0], rq[i, _A, 1], rq[i, _A, 2], rq[i, _A, 3]

        # R(r_q), shared by anchor_pos_b and the critic body positions
        r00 = F1 - F2 * (r_qy * r_qy + r_qz * r_qz)
        r01 = F2 * (r_qx * r_qy - r_qw * r_qz)
        r02 = F2 * (r_qx * r_qz + r_qw * r_qy)
        r10 = F2 * (r_qx * r_qy + r_qw * r_qz)
        r11 = F1 - F2 * (r_qx * r_qx + r_qz * r_qz)
        r12 = F2 * (r_qy * r_qz - r_qw * r_qx)
        r20 = F2 * (r_qx * r_qz - r_qw * r_qy)
        r21 = F2 * (r_qy * r_qz + r_qw * r_qx)
        r22 = F1 - F2 * (r_qx * r_qx + r_qy * r_qy)

        # yaw of r_q * conj(a_q) as the half-angle quaternion d = (dw, 0, 0, dz)
        qw, qx, qy, qz = quat_mul(r_qw, r_qx, r_qy, r_qz, a_qw, -a_qx, -a_qy, -a_qz)
        dw, dz = half_yaw(F2 * (qw * qz + qx * qy), F1 - F2 * (qy * qy + qz * qz))
        s = F2 * dw * dz
        cc = F2 * dz * dz

        # motion anchor in the robot-anchor frame (actor and critic)
        ex, ey, ez = a_px - r_px, a_py - r_py, a_pz - r_pz
        root_pos_err = ex * ex + ey * ey + ez * ez
        tw, tx, ty, tz = quat_mul(r_qw, -r_qx, -r_qy, -r_qz, a_qw, a_qx, a_qy, a_qz)
        actor[i, 58] = critic[i, 58] = r00 * ex + r10 * ey + r20 * ez
        actor[i, 59] = critic[i, 59] = r01 * ex + r11 * ey + r21 * ez
        actor[i, 60] = critic[i, 60] = r02 * ex + r12 * ey + r22 * ez
        actor[i, 61] = critic[i, 61] = F1 - F2 * (ty * ty + tz * tz)
        actor[i, 62] = critic[i, 62] = F2 * (tx * ty - tw * tz)
        actor[i, 63] = critic[i, 63] = F2 * (tx * ty + tw * tz)
        actor[i, 64] = critic[i, 64] = F1 - F2 * (tx * tx + tz * tz)
        actor[i, 65] = critic[i, 65] = F2 * (tx * tz - tw * ty)
        actor[i, 66] = critic[i, 66] = F2 * (ty * tz + tw * tx)

        root_ori_err = F0
        if on1:
            root_ori_err = ori_error(a_qw * r_qw + a_qx * r_qx + a_qy * r_qy + a_qz * r_qz)

        # terminations, decided here where the answer is certain (see _sure); the rest go to _terminated
        hit = abs(ez) > thr_z  # one float32 subtraction: the reference's bits whatever the flags
        unsure = False
        if check_ori:
            ga, gr = a_qx * a_qx + a_qy * a_qy, r_qx * r_qx + r_qy * r_qy
            g = abs(F2 * (ga - gr))
            sure = _sure(g, thr_ori, F1 + F2 * (ga + gr))
            hit |= sure & (g > thr_ori)
            unsure |= not sure

        body_pos_err = body_ori_err = lin_err = ang_err = ee_err = F0
        contacts = 0
        for b in range(_NB):
            bx, by, bz = rp[i, b, 0], rp[i, b, 1], rp[i, b, 2]
            m_z = mp[i, b, 2]
            vx = mp[i, b, 0] - a_px
            vy = mp[i, b, 1] - a_py
            px = vx - s * vy - cc * vx + r_px - bx
            py = vy + s * vx - cc * vy + r_py - by
            pz = m_z - bz
            body_pos_err += px * px + py * py + pz * pz
            if b == 3 or b == 6 or b == 10 or b == 13:
                ee_err += pz * pz
                t = abs(pz)
                sure = _sure(t, thr_ee, abs(m_z) + F2 * abs(a_pz) + abs(bz))
                hit |= sure & (t > thr_ee)
                unsure |= not sure
            else:
                contacts += bz < _CZ

            bw, bqx, bqy, bqz = rq[i, b, 0], rq[i, b, 1], rq[i, b, 2], rq[i, b, 3]
            if on3:
                mw, mx, my, mz = mq[i, b, 0], mq[i, b, 1], mq[i, b, 2], mq[i, b, 3]
                body_ori_err += ori_error(
                    (dw * mw - dz * mz) * bw
                    + (dw * mx - dz * my) * bqx
                    + (dw * my + dz * mx) * bqy
                    + (dw * mz + dz * mw) * bqz
                )

            for d in range(3):
                dl = mlv[i, b, d] - rlv[i, b, d]
                da = mav[i, b, d] - rav[i, b, d]
                lin_err += dl * dl
                ang_err += da * da

            # critic: body pose in the robot-anchor frame
            ox, oy, oz = bx - r_px, by - r_py, bz - r_pz
            o = 160 + 3 * b
            critic[i, o] = r00 * ox + r10 * oy + r20 * oz
            critic[i, o + 1] = r01 * ox + r11 * oy + r21 * oz
            critic[i, o + 2] = r02 * ox + r12 * oy + r22 * oz
            tw, tx, ty, tz = quat_mul(r_qw, -r_qx, -r_qy, -r_qz, bw, bqx, bqy, bqz)
            o = 202 + 6 * b
            critic[i, o] = F1 - F2 * (ty * ty + tz * tz)
            critic[i, o + 1] = F2 * (tx * ty - tw * tz)
            critic[i, o + 2] = F2 * (tx * ty + tw * tz)
            critic[i, o + 3] = F1 - F2 * (tx * tx + tz * tz)
            critic[i, o + 4] = F2 * (tx * tz - tw * ty)
            critic[i, o + 5] = F2 * (ty * tz + tw * tx)

        if contact_term:
            hit |= contacts > 0
        if unsure and not hit:
            hit = _terminated(i, mp, mq, rp, rq, thresh)
        terminated[i] = hit

        # joint sums: loads only, so the float32 reductions vectorise
        jp_err = jv_err = act_rate = limit = F0
        for j in range(_ND):
            e = mjp[i, j] - dof_pos[i, j]
            jp_err += e * e
            e = mjv[i, j] - dof_vel[i, j]
            jv_err += e * e
            e = cur_act[i, j] - last_act[i, j]
            act_rate += e * e
        if on10:
            for j in range(_ND):
                q = dof_pos[i, j]
                e = max(joint_lo[j] - q, F0) + max(q - joint_hi[j], F0)
                limit += e * e
        for j in range(_ND):
            mq_j = mjp[i, j]
            mv_j = mjv[i, j]
            dq = dof_vel[i, j]
            a_j = cur_act[i, j]
            rel = dof_pos[i, j] - default_angles[j]
            actor[i, j] = critic[i, j] = mq_j
            actor[i, 29 + j] = critic[i, 29 + j] = mv_j
            critic[i, 73 + j] = rel
            actor[i, 73 + j] = rel + n_jp[i, j]
            critic[i, 102 + j] = dq
            actor[i, 102 + j] = dq + n_jv[i, j]
            actor[i, 131 + j] = critic[i, 131 + j] = a_j

        for d in range(3):
            lv = linvel[i, d]
            g = gyro[i, d]
            critic[i, 67 + d] = critic[i, 286 + d] = lv
            critic[i, 70 + d] = g
            actor[i, 67 + d] = lv + n_lin[i, d]
            actor[i, 70 + d] = g + n_gyro[i, d]

        # weighted terms in slot order; zero scales are skipped (no exp, no log contribution)
        total = 0.0
        if on0:
            w = scale[0] * math.exp(root_pos_err * k0)
            total += w
            s0 += w
        if on1:
            w = scale[1] * math.exp(root_ori_err * k1)
            total += w
            s1 += w
        if on2:
            w = scale[2] * math.exp(body_pos_err * k2)
            total += w
            s2 += w
        if on3:
            w = scale[3] * math.exp(body_ori_err * k3)
            total += w
            s3 += w
        if on4:
            w = scale[4] * math.exp(lin_err * k4)
            total += w
            s4 += w
        if on5:
            w = scale[5] * math.exp(ang_err * k5)
            total += w
            s5 += w
        if on6:
            w = scale[6] * math.exp(ee_err * k6)
            total += w
            s6 += w
        if on7:
            w = scale[7] * math.exp(jp_err * k7)
            total += w
            s7 += w
        if on8:
            w = scale[8] * math.exp(jv_err * k8)
            total += w
            s8 += w
        if on9:
            w = scale[9] * act_rate
            total += w
            s9 += w
        if on10:
            w = scale[10] * limit
            total += w
            s10 += w
        if on11:
            w = scale[11] * contacts
            total += w
            s11 += w
        reward[i] = total * ctrl_dt

    logs[c, 0], logs[c, 1], logs[c, 2], logs[c, 3] = s0, s1, s2, s3
    logs[c, 4], logs[c, 5], logs[c, 6], logs[c, 7] = s4, s5, s6, s7
    logs[c, 8], logs[c, 9], logs[c, 10], logs[c, 11] = s8, s9, s10, s11


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


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def kernel_args(inp: MotionTrackingInputs) -> tuple:
    """The kernel's positional arguments for `inp`, in signature order."""
    prof = inp.profile
    return (
        inp.nchunks,
        inp.motion_joint_pos, inp.motion_joint_vel,
        inp.motion_body_pos, inp.motion_body_quat, inp.motion_body_lin_vel, inp.motion_body_ang_vel,
        inp.robot_body_pos, inp.robot_body_quat, inp.robot_body_lin_vel, inp.robot_body_ang_vel,
        inp.linvel, inp.gyro, inp.dof_pos, inp.dof_vel, inp.current_actions, inp.last_actions,
        # the shared float64 vectors as float32, as the reference converts them: float32 math per joint
        _f32(inp.default_angles), _f32(inp.joint_lower), _f32(inp.joint_upper),
        inp.noise_linvel, inp.noise_gyro, inp.noise_joint_pos, inp.noise_dof_vel,
        prof.scale_array(), prof.std_array(), prof.threshold_array(), float(prof.ctrl_dt),
        inp.reward, inp.terminated, inp.actor_obs, inp.critic_obs, inp.logs,
    )  # fmt: skip
