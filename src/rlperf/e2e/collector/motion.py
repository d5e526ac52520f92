"""A SYNTHETIC reference motion for g1_motion_tracking, made on the G1 model itself.

No motion-capture clip ships with the assets, so the tracking kernel runs against forward kinematics of a
smooth joint trajectory (seeded sinusoids around the keyframe pose, a slow forward drift of the root) with
velocities from central finite differences. Every output that uses it carries LABEL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.e2e.collector import quat
from rlperf.e2e.collector.assets import TRACKED_BODIES, require_mujoco

LABEL = "SYNTHETIC reference motion (forward kinematics of a smooth joint trajectory on the G1 model)"
FPS = 50  # one frame per control step (C2)


@dataclass(frozen=True)
class Motion:
    """Per-frame reference arrays (frame index leading), float32 like the kernel inputs."""

    joint_pos: np.ndarray  # (T, 29)
    joint_vel: np.ndarray  # (T, 29)
    body_pos: np.ndarray  # (T, 14, 3)
    body_quat: np.ndarray  # (T, 14, 4)
    body_lin_vel: np.ndarray  # (T, 14, 3)
    body_ang_vel: np.ndarray  # (T, 14, 3)
    root_qpos: np.ndarray  # (T, 7) float64: free-joint pose, for resets
    root_lin_vel: np.ndarray  # (T, 3) float64, world
    root_ang_vel: np.ndarray  # (T, 3) float64, world
    label: str = LABEL

    @property
    def num_frames(self) -> int:
        return self.joint_pos.shape[0]


def synthesise(model, key_qpos: np.ndarray, *, seconds: float = 5.0, seed: int = 0) -> Motion:
    """Forward kinematics of `seconds` of motion at FPS; deterministic for a seed."""
    mujoco = require_mujoco()
    rng = np.random.default_rng(seed)
    frames = int(seconds * FPS)
    t = np.arange(frames) / FPS
    ndof = model.nq - 7
    amp = rng.uniform(0.05, 0.25, ndof)
    freq = rng.uniform(0.3, 1.0, ndof)
    phase = rng.uniform(0.0, 2 * np.pi, ndof)
    joints = key_qpos[7:] + amp * np.sin(2 * np.pi * freq * t[:, None] + phase)
    lo, hi = model.jnt_range[1:, 0], model.jnt_range[1:, 1]
    joints = np.clip(joints, lo, hi)
    yaw = 0.2 * np.sin(2 * np.pi * 0.2 * t)
    root = np.zeros((frames, 7))
    root[:, 0] = 0.3 * t
    root[:, 2] = key_qpos[2] + 0.01 * np.sin(2 * np.pi * 0.5 * t)
    root[:, 3:7] = quat.from_euler(np.zeros(frames), np.zeros(frames), yaw)

    ids = [model.body(name).id for name in TRACKED_BODIES]
    data = mujoco.MjData(model)
    pos = np.empty((frames, len(ids), 3))
    rot = np.empty((frames, len(ids), 4))
    for k in range(frames):
        data.qpos[:7] = root[k]
        data.qpos[7:] = joints[k]
        mujoco.mj_kinematics(model, data)
        pos[k] = data.xpos[ids]
        rot[k] = data.xquat[ids]
    dt = 1.0 / FPS
    lin = np.gradient(pos, dt, axis=0)
    ang = np.empty_like(pos)
    ang[1:-1] = quat.angular_velocity(rot[:-2], rot[2:], 2 * dt)
    ang[0], ang[-1] = quat.angular_velocity(rot[0], rot[1], dt), quat.angular_velocity(rot[-2], rot[-1], dt)
    f32 = np.float32
    return Motion(joint_pos=joints.astype(f32), joint_vel=np.gradient(joints, dt, axis=0).astype(f32),
                  body_pos=pos.astype(f32), body_quat=rot.astype(f32), body_lin_vel=lin.astype(f32),
                  body_ang_vel=ang.astype(f32), root_qpos=root, root_lin_vel=lin[:, 0].copy(),
                  root_ang_vel=ang[:, 0].copy())
