"""g1_walk_flat on MuJoCo: kernel inputs from the snapshot, commands, gait phase, air time, resets (C3)."""

from __future__ import annotations

import math

import numpy as np

from rlperf.e2e.collector import quat
from rlperf.e2e.collector.config import TaskConfig
from rlperf.e2e.collector.state import Snapshot

COMMAND_LO = np.array([-0.6, -0.4, -0.8])
COMMAND_HI = np.array([1.0, 0.4, 0.8])
COMMAND_DEAD_ZONE = 0.2
RESET_XY = 0.5


class WalkTask:
    """Per-env bookkeeping of the walk env and the mapping of a Snapshot into WalkInputs."""

    name = "g1_walk_flat"

    def __init__(self, cfg: TaskConfig, num_envs: int, key_qpos: np.ndarray, default_angles: np.ndarray):
        from rlperf.envs.walk import inputs as walk

        self._walk = walk
        env = cfg.env
        self.cfg = cfg
        self.obs_dim, self.critic_dim = walk.OBS_DIM, walk.CRITIC_DIM
        self.episode_steps = cfg.episode_steps
        self.key_qpos = key_qpos
        self.default_angles = default_angles.astype(np.float64)
        params = dict(tracking_sigma=env["tracking_sigma"], feet_sigma=env["feet_phase_tracking_sigma"],
                      swing_height=env["feet_phase_swing_height"], base_height_target=env["base_height_target"],
                      min_base_height=env["min_base_height"], max_tilt_rad=math.radians(env["max_tilt_deg"]),
                      close_feet_threshold=env["close_feet_threshold"], ctrl_dt=cfg.ctrl_dt)
        self.profile = walk.Profile("config", dict(cfg.reward_scales), params,
                                    curriculum=bool(env["curriculum"]["enabled"]), observations=True)
        noise = cfg.noise
        self.noise_level = float(noise.get("level", 0.0))
        self.noise_scales = np.concatenate([np.full(3, noise.get("scale_gyro", 0.0)),
                                            np.full(3, noise.get("scale_gravity", 0.0)),
                                            np.full(29, noise.get("scale_joint_angle", 0.0)),
                                            np.full(29, noise.get("scale_joint_vel", 0.0))])
        self.phase_step = 2 * np.pi * float(env["gait_frequency"]) * cfg.ctrl_dt
        self.qvel_limit = float(env["reset_base_qvel_limit"])
        n = num_envs
        self.commands = np.zeros((n, 3), np.float32)
        self.gait_phase = np.zeros((n, 2), np.float32)
        self.air_time = np.zeros((n, 2), np.float32)
        self.actions = np.zeros((n, 29), np.float32)
        self.last_actions = np.zeros((n, 29), np.float32)

    def meta(self) -> dict:
        return {"gravity_input": "world up in the torso frame (-projected gravity)",
                "contacts": "foot-floor contact sensor in slot 0 of 4 per foot (feet-only scene)",
                "noise_level": self.noise_level}

    # ---- per step --------------------------------------------------------------------------
    def apply_action(self, actions: np.ndarray) -> None:
        self.last_actions[:] = self.actions
        self.actions[:] = actions
        self.gait_phase[:] = np.fmod(self.gait_phase + np.float32(self.phase_step), np.float32(2 * np.pi))

    def draw_noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Drawn whenever level > 0, even for fields whose scale is 0 (C3)."""
        if self.noise_level <= 0.0:
            return np.zeros((n, self.noise_scales.size), np.float32)
        return (rng.uniform(-1.0, 1.0, (n, self.noise_scales.size)) * self.noise_level
                * self.noise_scales).astype(np.float32)

    def after_update(self, snap: Snapshot, terminated: np.ndarray) -> np.ndarray:
        """Air time from contacts; walk adds no truncation beyond the episode length."""
        contact = snap.foot_contacts > 0.5
        self.air_time[:] = np.where(contact, 0.0, self.air_time + np.float32(self.cfg.ctrl_dt))
        return np.zeros_like(terminated)

    # ---- kernel inputs ------------------------------------------------------------------------
    def make_inputs(self, snap: Snapshot, rows: np.ndarray | None, noise: np.ndarray):
        """WalkInputs for `rows` (all envs when None), fresh contiguous arrays."""
        walk = self._walk
        sel = slice(None) if rows is None else rows
        n = snap.num_envs
        contacts = np.zeros((n, 2, 4), np.float32)
        contacts[:, :, 0] = snap.foot_contacts
        weights = walk.pose_weights()
        upper = weights.copy()
        upper[:12] = 0.0
        c = np.ascontiguousarray
        return walk.WalkInputs(
            profile="config", linvel=snap.base_linvel, gyro=snap.base_angvel,
            gravity=c(-snap.projected_gravity), dof_pos=snap.dof_pos, dof_vel=snap.dof_vel, base_z=snap.base_z,
            feet_pos=snap.feet_pos, feet_quat=snap.feet_quat, contacts=contacts, commands=c(self.commands[sel]),
            actions=c(self.actions[sel]), last_actions=c(self.last_actions[sel]),
            gait_phase=c(self.gait_phase[sel]), air_time=c(self.air_time[sel]), noise=noise,
            default_angles=self.default_angles, pose_weights=weights, upper_weights=upper,
            scales=self.profile.scale_vector(), params=self.profile.param_vector(), observations=True)

    def refill(self, inputs, snap: Snapshot, noise: np.ndarray) -> None:
        """Copy a full-batch snapshot into `inputs` in place (the fused runner holds these arrays)."""
        for name in ("linvel", "dof_pos", "dof_vel", "base_z", "feet_pos", "feet_quat"):
            np.copyto(getattr(inputs, name), getattr(snap, {"linvel": "base_linvel"}.get(name, name)))
        np.copyto(inputs.gyro, snap.base_angvel)
        np.copyto(inputs.gravity, -snap.projected_gravity)
        inputs.contacts[:, :, 0] = snap.foot_contacts
        for name in ("commands", "actions", "last_actions", "gait_phase", "air_time"):
            np.copyto(getattr(inputs, name), getattr(self, name))
        np.copyto(inputs.noise, noise)

    # ---- resets ----------------------------------------------------------------------------------
    def reset(self, rows: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """C3 reset: keyframe pose, base xy U(+-0.5), yaw U(+-pi), base qvel U(+-limit); new commands and phase."""
        k = rows.size
        qpos = np.tile(self.key_qpos, (k, 1))
        qpos[:, :2] += rng.uniform(-RESET_XY, RESET_XY, (k, 2))
        yaw = rng.uniform(-np.pi, np.pi, k)
        qpos[:, 3:7] = quat.mul(quat.from_euler(np.zeros(k), np.zeros(k), yaw), qpos[:, 3:7])
        qvel = np.zeros((k, self.key_qpos.size - 1))
        qvel[:, :6] = rng.uniform(-self.qvel_limit, self.qvel_limit, (k, 6))
        cmd = rng.uniform(COMMAND_LO, COMMAND_HI, (k, 3))
        small = np.linalg.norm(cmd[:, :2], axis=1) < COMMAND_DEAD_ZONE
        cmd[small, :2] = 0.0
        self.commands[rows] = cmd
        phi = rng.uniform(0.0, 2 * np.pi, k)
        self.gait_phase[rows] = np.stack([phi, phi + np.pi], axis=1)
        self.air_time[rows] = 0.0
        self.actions[rows] = 0.0
        self.last_actions[rows] = 0.0
        return qpos, qvel
