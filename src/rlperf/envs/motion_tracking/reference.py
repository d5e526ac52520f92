"""Vectorised numpy float32 `update_state` for g1_motion_tracking: the parity oracle (docs/workloads.md C2).

Everything stays float32 as in the reference env: profile constants enter as Python floats (weak
scalars under NEP 50) and thresholds as np.float32, so no array is promoted to float64. Termination
quantities are computed in the same float32 operation order as the fused kernel's strict helper.
"""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import EnvOutputs
from rlperf.envs.motion_tracking.inputs import ACTOR_DIM, CRITIC_DIM, MotionTrackingInputs
from rlperf.envs.motion_tracking.profiles import ANCHOR, CONTACT_Z, EE_BODIES, NON_EE_BODIES, TERMS

F32 = np.float32


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of wxyz quaternions, broadcasting over leading axes."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ),
        axis=-1,
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0], dtype=q.dtype)


def rot6d(q: np.ndarray) -> np.ndarray:
    """First two columns of R(q), row-major: [R00, R01, R10, R11, R20, R21]."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        (
            1 - 2 * (y * y + z * z),
            2 * (x * y - w * z),
            2 * (x * y + w * z),
            1 - 2 * (x * x + z * z),
            2 * (x * z - w * y),
            2 * (y * z + w * x),
        ),
        axis=-1,
    )


def rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v for unit wxyz quaternions."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    vx, vy, vz = np.moveaxis(v, -1, 0)
    r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
    r10, r11, r12 = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
    r20, r21, r22 = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
    return np.stack(
        (r00 * vx + r10 * vy + r20 * vz, r01 * vx + r11 * vy + r21 * vz, r02 * vx + r12 * vy + r22 * vz),
        axis=-1,
    )


def ori_error(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """(2 acos(clip(|<q1, q2>|, 0, 1)))^2, the spec's orientation error."""
    dot = np.abs(np.sum(q1 * q2, axis=-1))
    return (2 * np.arccos(np.clip(dot, 0, 1))) ** 2


def gravity_z(q: np.ndarray) -> np.ndarray:
    return 2 * (q[..., 1] * q[..., 1] + q[..., 2] * q[..., 2]) - 1


def relative_transforms(inp: MotionTrackingInputs):
    """Yaw-aligned reference body poses and the motion anchor in the robot-anchor frame."""
    mp, mq = inp.motion_body_pos, inp.motion_body_quat
    a_p, a_q = mp[:, ANCHOR], mq[:, ANCHOR]
    r_p, r_q = inp.robot_body_pos[:, ANCHOR], inp.robot_body_quat[:, ANCHOR]

    q = quat_mul(r_q, quat_conj(a_q))
    qw, qx, qy, qz = np.moveaxis(q, -1, 0)
    half_yaw = np.arctan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz)) * 0.5
    dw, dz = np.cos(half_yaw), np.sin(half_yaw)
    zero = np.zeros_like(dw)
    d = np.stack((dw, zero, zero, dz), axis=-1)
    ref_q = quat_mul(d[:, None, :], mq)

    v = mp - a_p[:, None, :]
    s = (2 * dw * dz)[:, None]
    c = (2 * dz * dz)[:, None]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    ref_p = np.stack(
        (
            vx - s * vy - c * vx + r_p[:, None, 0],
            vy + s * vx - c * vy + r_p[:, None, 1],
            vz + a_p[:, None, 2],
        ),
        axis=-1,
    )
    anchor_pos_b = rotate_inverse(r_q, a_p - r_p)
    anchor_ori_b = rot6d(quat_mul(quat_conj(r_q), a_q))
    return ref_p, ref_q, anchor_pos_b, anchor_ori_b


def _term(name: str, inp: MotionTrackingInputs, ref_p, ref_q) -> np.ndarray:
    """Raw (unscaled) value of one term; exp terms already mapped through exp(-e / std^2)."""
    mp, mq = inp.motion_body_pos, inp.motion_body_quat
    rp, rq = inp.robot_body_pos, inp.robot_body_quat
    if name == "motion_global_root_pos":
        err = np.sum((mp[:, ANCHOR] - rp[:, ANCHOR]) ** 2, axis=-1)
    elif name == "motion_global_root_ori":
        err = ori_error(mq[:, ANCHOR], rq[:, ANCHOR])
    elif name == "motion_body_pos":
        err = np.mean(np.sum((ref_p - rp) ** 2, axis=-1), axis=-1)
    elif name == "motion_body_ori":
        err = np.mean(ori_error(ref_q, rq), axis=-1)
    elif name == "motion_body_lin_vel":
        err = np.mean(np.sum((inp.motion_body_lin_vel - inp.robot_body_lin_vel) ** 2, axis=-1), axis=-1)
    elif name == "motion_body_ang_vel":
        err = np.mean(np.sum((inp.motion_body_ang_vel - inp.robot_body_ang_vel) ** 2, axis=-1), axis=-1)
    elif name == "motion_ee_body_pos_z":
        ee = list(EE_BODIES)
        err = np.mean((ref_p[:, ee, 2] - rp[:, ee, 2]) ** 2, axis=-1)
    elif name == "motion_joint_pos":
        err = np.mean((inp.motion_joint_pos - inp.dof_pos) ** 2, axis=-1)
    elif name == "motion_joint_vel":
        err = np.mean((inp.motion_joint_vel - inp.dof_vel) ** 2, axis=-1)
    elif name == "action_rate_l2":
        return np.sum((inp.current_actions - inp.last_actions) ** 2, axis=-1)
    elif name == "joint_limit":
        q = inp.dof_pos
        lo, hi = inp.joint_lower.astype(F32), inp.joint_upper.astype(F32)
        return np.sum((np.maximum(lo - q, 0) + np.maximum(q - hi, 0)) ** 2, axis=-1)
    elif name == "undesired_contacts":
        return np.sum(rp[:, list(NON_EE_BODIES), 2] < F32(CONTACT_Z), axis=-1).astype(F32)
    else:
        raise ValueError(f"unsupported term {name!r}")
    std = inp.profile.stds[TERMS.index(name)]
    return np.exp(-err / (std * std))


def terminations(inp: MotionTrackingInputs, ref_p: np.ndarray) -> np.ndarray:
    """OR of the C2 conditions; NaN compares false, +-inf trips the threshold."""
    prof = inp.profile
    mp, mq = inp.motion_body_pos, inp.motion_body_quat
    rp, rq = inp.robot_body_pos, inp.robot_body_quat
    done = np.abs(mp[:, ANCHOR, 2] - rp[:, ANCHOR, 2]) > F32(prof.anchor_pos_z_threshold)
    if prof.anchor_ori_threshold < 2.0:
        gz_err = np.abs(gravity_z(mq[:, ANCHOR]) - gravity_z(rq[:, ANCHOR]))
        done |= gz_err > F32(prof.anchor_ori_threshold)
    ee = list(EE_BODIES)
    done |= np.any(np.abs(ref_p[:, ee, 2] - rp[:, ee, 2]) > F32(prof.ee_body_pos_z_threshold), axis=-1)
    if prof.terminate_on_undesired_contacts:
        done |= np.any(rp[:, list(NON_EE_BODIES), 2] < F32(CONTACT_Z), axis=-1)
    return done


def update_state(inp: MotionTrackingInputs) -> EnvOutputs:
    """Transforms, terminations, reward, per-term logs and both observations for all envs."""
    prof = inp.profile
    n = inp.num_envs
    ref_p, ref_q, anchor_pos_b, anchor_ori_b = relative_transforms(inp)
    terminated = terminations(inp, ref_p)

    total = np.zeros(n, dtype=F32)
    logs: dict[str, float] = {}
    for name, scale in zip(TERMS, prof.scales):
        if scale == 0.0:
            continue
        weighted = scale * _term(name, inp, ref_p, ref_q)
        total += weighted
        logs[f"reward/{name}"] = float(np.mean(weighted, dtype=np.float64))
    reward = total * prof.ctrl_dt

    joint_rel = inp.dof_pos - inp.default_angles.astype(F32)
    actor = np.empty((n, ACTOR_DIM), dtype=F32)
    actor[:, 0:29] = inp.motion_joint_pos
    actor[:, 29:58] = inp.motion_joint_vel
    actor[:, 58:61] = anchor_pos_b
    actor[:, 61:67] = anchor_ori_b
    actor[:, 131:160] = inp.current_actions
    critic = np.empty((n, CRITIC_DIM), dtype=F32)
    critic[:, :160] = actor
    critic[:, 67:70] = inp.linvel
    critic[:, 70:73] = inp.gyro
    critic[:, 73:102] = joint_rel
    critic[:, 102:131] = inp.dof_vel
    actor[:, 67:70] = inp.linvel + inp.noise_linvel
    actor[:, 70:73] = inp.gyro + inp.noise_gyro
    actor[:, 73:102] = joint_rel + inp.noise_joint_pos
    actor[:, 102:131] = inp.dof_vel + inp.noise_dof_vel

    r_p, r_q = inp.robot_body_pos[:, ANCHOR], inp.robot_body_quat[:, ANCHOR]
    body_pos_b = rotate_inverse(r_q[:, None, :], inp.robot_body_pos - r_p[:, None, :])
    body_ori_b = rot6d(quat_mul(quat_conj(r_q)[:, None, :], inp.robot_body_quat))
    critic[:, 160:202] = body_pos_b.reshape(n, -1)
    critic[:, 202:286] = body_ori_b.reshape(n, -1)
    critic[:, 286:289] = inp.linvel
    return EnvOutputs(reward=reward, terminated=terminated, actor_obs=actor, critic_obs=critic, term_logs=logs)
