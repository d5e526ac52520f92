"""g1_motion_tracking on MuJoCo against the SYNTHETIC motion: frames, clip ends, resets (C2)."""

from __future__ import annotations

import numpy as np

from rlperf.e2e.collector import quat
from rlperf.e2e.collector.config import TaskConfig
from rlperf.e2e.collector.motion import Motion
from rlperf.e2e.collector.state import Snapshot
from rlperf.envs.base import log_partials

# C2 reset ranges: root pose x, y, z, roll, pitch, yaw; root velocity x, y, z, roll, pitch, yaw.
POSE_RANGE = np.array([0.05, 0.05, 0.01, 0.1, 0.1, 0.2])
VEL_RANGE = np.array([0.5, 0.5, 0.2, 0.52, 0.52, 0.78])
JOINT_RANGE = 0.1


class TrackingTask:
    """Per-env motion frames and actions, and the mapping of a Snapshot into MotionTrackingInputs."""

    name = "g1_motion_tracking"

    def __init__(self, cfg: TaskConfig, num_envs: int, motion: Motion, joint_range: np.ndarray,
                 default_angles: np.ndarray):
        from rlperf.envs.motion_tracking import inputs as mt
        from rlperf.envs.motion_tracking.profiles import TERMS, Profile

        self._mt = mt
        env = cfg.env
        self.cfg = cfg
        self.motion = motion
        self.obs_dim, self.critic_dim = mt.ACTOR_DIM, mt.CRITIC_DIM
        self.episode_steps = cfg.episode_steps
        unknown = set(cfg.reward_scales) - set(TERMS)
        if unknown:
            raise ValueError(f"reward scales {sorted(unknown)} have no kernel slot; slots: {', '.join(TERMS)}")
        noise = cfg.noise
        self.noise_level = float(noise.get("level", 0.0))
        self.profile = Profile(
            name="config", scales=tuple(float(cfg.reward_scales.get(t, 0.0)) for t in TERMS),
            anchor_pos_z_threshold=float(env.get("anchor_pos_z_threshold", 0.25)),
            anchor_ori_threshold=float(env.get("anchor_ori_threshold", 0.8)),
            ee_body_pos_z_threshold=float(env.get("ee_body_pos_z_threshold", 0.25)), ctrl_dt=cfg.ctrl_dt,
            noise_scales=tuple(float(noise.get(k, 0.0)) for k in
                               ("scale_linvel", "scale_gyro", "scale_joint_angle", "scale_joint_vel")))
        self.truncate_on_clip_end = bool(env.get("truncate_on_clip_end", True))
        self.joint_lower = np.ascontiguousarray(joint_range[:, 0], np.float64)
        self.joint_upper = np.ascontiguousarray(joint_range[:, 1], np.float64)
        self.default_angles = default_angles.astype(np.float64)
        self.frames = np.zeros(num_envs, np.int64)
        self.actions = np.zeros((num_envs, 29), np.float32)
        self.last_actions = np.zeros((num_envs, 29), np.float32)

    def meta(self) -> dict:
        return {"reference_motion": self.motion.label, "motion_frames": self.motion.num_frames,
                "motion_sampler": "uniform start frame (the adaptive sampler is not modelled)",
                "noise_level": self.noise_level}

    def apply_action(self, actions: np.ndarray) -> None:
        self.last_actions[:] = self.actions
        self.actions[:] = actions

    def draw_noise(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        """Four actor-noise draws (linvel 3, gyro 3, joint pos 29, joint vel 29); none when level <= 0."""
        shapes = ((n, 3), (n, 3), (n, 29), (n, 29))
        if self.noise_level <= 0.0:
            return tuple(np.zeros(s, np.float32) for s in shapes)
        return tuple((rng.uniform(-1.0, 1.0, s) * (self.noise_level * scale)).astype(np.float32)
                     for s, scale in zip(shapes, self.profile.noise_scales))

    def after_update(self, snap: Snapshot, terminated: np.ndarray) -> np.ndarray:
        """Sampler step: frames += 1; rows past the clip end that did not terminate are truncated."""
        self.frames += 1
        at_end = self.frames >= self.motion.num_frames - 1
        if self.truncate_on_clip_end:
            return at_end & ~terminated
        self.frames[at_end] = 0
        return np.zeros_like(terminated)

    def _motion_fields(self, rows) -> dict:
        m, f = self.motion, self.frames if rows is None else self.frames[rows]
        f = np.minimum(f, m.num_frames - 1)
        return dict(motion_joint_pos=m.joint_pos[f], motion_joint_vel=m.joint_vel[f], motion_body_pos=m.body_pos[f],
                    motion_body_quat=m.body_quat[f], motion_body_lin_vel=m.body_lin_vel[f],
                    motion_body_ang_vel=m.body_ang_vel[f])

    def make_inputs(self, snap: Snapshot, rows: np.ndarray | None, noise: tuple[np.ndarray, ...]):
        mt = self._mt
        sel = slice(None) if rows is None else rows
        n = snap.num_envs
        c = np.ascontiguousarray
        return mt.MotionTrackingInputs(
            profile=self.profile, noise_level=self.noise_level, **self._motion_fields(rows),
            robot_body_pos=snap.body_pos, robot_body_quat=snap.body_quat, robot_body_lin_vel=snap.body_linvel,
            robot_body_ang_vel=snap.body_angvel, linvel=snap.base_linvel, gyro=snap.base_angvel,
            dof_pos=snap.dof_pos, dof_vel=snap.dof_vel, current_actions=c(self.actions[sel]),
            last_actions=c(self.last_actions[sel]), default_angles=self.default_angles,
            joint_lower=self.joint_lower, joint_upper=self.joint_upper, noise_linvel=noise[0], noise_gyro=noise[1],
            noise_joint_pos=noise[2], noise_dof_vel=noise[3], reward=np.zeros(n, np.float32),
            terminated=np.zeros(n, np.bool_), actor_obs=np.zeros((n, mt.ACTOR_DIM), np.float32),
            critic_obs=np.zeros((n, mt.CRITIC_DIM), np.float32),
            logs=log_partials(len(self.profile.scales), mt.num_chunks(n)))

    def refill(self, inputs, snap: Snapshot, noise: tuple[np.ndarray, ...]) -> None:
        for name, value in self._motion_fields(None).items():
            np.copyto(getattr(inputs, name), value)
        pairs = dict(robot_body_pos=snap.body_pos, robot_body_quat=snap.body_quat,
                     robot_body_lin_vel=snap.body_linvel, robot_body_ang_vel=snap.body_angvel,
                     linvel=snap.base_linvel, gyro=snap.base_angvel, dof_pos=snap.dof_pos, dof_vel=snap.dof_vel,
                     current_actions=self.actions, last_actions=self.last_actions, noise_linvel=noise[0],
                     noise_gyro=noise[1], noise_joint_pos=noise[2], noise_dof_vel=noise[3])
        for name, value in pairs.items():
            np.copyto(getattr(inputs, name), value)

    def reset(self, rows: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """C2 reset around the motion at a uniformly drawn start frame."""
        m, k = self.motion, rows.size
        frame = rng.integers(0, m.num_frames - 1, k)
        self.frames[rows] = frame
        pose = rng.uniform(-POSE_RANGE, POSE_RANGE, (k, 6))
        vel = rng.uniform(-VEL_RANGE, VEL_RANGE, (k, 6))
        qpos = np.empty((k, 7 + 29))
        qpos[:, :3] = m.root_qpos[frame, :3] + pose[:, :3]
        qpos[:, 3:7] = quat.mul(quat.from_euler(pose[:, 3], pose[:, 4], pose[:, 5]), m.root_qpos[frame, 3:7])
        qpos[:, 7:] = np.clip(m.joint_pos[frame] + rng.uniform(-JOINT_RANGE, JOINT_RANGE, (k, 29)),
                              self.joint_lower, self.joint_upper)
        qvel = np.empty((k, 6 + 29))
        qvel[:, :3] = m.root_lin_vel[frame] + vel[:, :3]
        qvel[:, 3:6] = quat.rotate_inverse(qpos[:, 3:7], m.root_ang_vel[frame] + vel[:, 3:])  # free joint: local
        qvel[:, 6:] = m.joint_vel[frame]
        self.actions[rows] = 0.0
        self.last_actions[rows] = 0.0
        return qpos, qvel
