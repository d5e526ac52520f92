"""Batched wxyz quaternion helpers (float64 numpy) for state extraction, resets and the synthetic motion."""

from __future__ import annotations

import numpy as np


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v: a world vector expressed in the frame of q."""
    qv = np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)
    return mul(mul(conj(q), qv), q)[..., 1:]


def from_euler(roll: np.ndarray, pitch: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Extrinsic x-y-z (roll, pitch, yaw) angles to a unit quaternion."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.stack([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy], axis=-1)


def angular_velocity(q0: np.ndarray, q1: np.ndarray, dt: float) -> np.ndarray:
    """World-frame angular velocity taking q0 to q1 in dt (finite difference on the shortest arc)."""
    dq = mul(q1, conj(q0))
    dq = np.where(dq[..., :1] < 0, -dq, dq)
    vec = dq[..., 1:]
    norm = np.linalg.norm(vec, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(norm, dq[..., :1])
    axis = np.divide(vec, norm, out=np.zeros_like(vec), where=norm > 1e-12)
    return axis * angle / dt
