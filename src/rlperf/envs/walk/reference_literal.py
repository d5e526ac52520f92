"""LITERAL numpy g1_walk_flat update_state: one expression per term, as first written (kept for comparison).

The oracle and timing baseline is the fast version in reference.py; tests keep the two within tolerance.

Terms are float32 arrays, reward accumulates in float32 in slot order, per-term log means are taken in
float64. Terminations (tilt, base height, and a non-finite guard on both) are decided in float64 so the
fused kernel can match them exactly, NaN and inf rows included.
"""

from __future__ import annotations

import numpy as np

from rlperf.envs.base import EnvOutputs
from rlperf.envs.walk.inputs import CRITIC_DIM, OBS_DIM, P, TERMS, WalkInputs

F32 = np.float32
OBS_GYRO, OBS_DOF_VEL, OBS_LINVEL = F32(0.25), F32(0.05), F32(2.0)


def swing_height(phase: np.ndarray, swing) -> np.ndarray:
    """Cubic-Bezier foot height target of the gait phase (C3)."""
    two_pi = F32(2 * np.pi)
    x = np.fmod(phase + F32(np.pi), two_pi) / two_pi
    up = np.minimum(F32(2) * x, F32(1))
    down = np.clip(F32(2) * x - F32(1), F32(0), F32(1))

    def bezier(t):
        return t * t * t + F32(3) * t * t * (F32(1) - t)

    return np.where(x <= F32(0.5), swing * bezier(up), swing * (F32(1) - bezier(down)))


class Terms:
    """Lazily computed float32 term arrays; aliases share one computation."""

    aliases = {"penalty_ang_vel_xy": "ang_vel_xy", "penalty_orientation": "orientation",
               "penalty_action_rate": "action_rate"}

    def __init__(self, inp: WalkInputs):
        self.inp = inp
        self.p = {name: F32(inp.params[k]) for name, k in P.items()}
        self.cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        key = self.aliases.get(name, name)
        if key not in self.cache:
            self.cache[key] = getattr(self, key)()
        return self.cache[key]

    def _contact(self):
        return (self.inp.contacts > F32(0.5)).any(axis=2)  # (N, 2)

    def _heights(self):
        return swing_height(self.inp.gait_phase, self.p["swing_height"])  # (N, 2)

    def tracking_lin_vel(self):
        err = np.sum(np.square(self.inp.commands[:, :2] - self.inp.linvel[:, :2]), axis=1)
        return np.exp(-err / self.p["tracking_sigma"])

    def tracking_ang_vel(self):
        return np.exp(-np.square(self.inp.commands[:, 2] - self.inp.gyro[:, 2]) / self.p["tracking_sigma"])

    def ang_vel_xy(self):
        return np.sum(np.square(self.inp.gyro[:, :2]), axis=1)

    def orientation(self):
        return np.sum(np.square(self.inp.gravity[:, :2]), axis=1)

    def action_rate(self):
        return np.sum(np.square(self.inp.actions - self.inp.last_actions), axis=1)

    def _pose(self, weights):
        dev = self.inp.dof_pos - self.inp.default_angles.astype(F32)
        return np.sum(np.square(dev) * weights.astype(F32), axis=1)  # no BLAS: its pool would compete

    def pose(self):
        return self._pose(self.inp.pose_weights)

    def upper_body_pose(self):
        return self._pose(self.inp.upper_weights)

    def penalty_feet_ori(self):
        return np.sum(np.square(self.inp.feet_quat[:, :, 1:3]), axis=(1, 2))

    def feet_phase(self):
        err = np.sum(np.square(self.inp.feet_pos[:, :, 2] - self._heights()), axis=1)
        gate = np.maximum(self.inp.linvel[:, 0], F32(0)) >= self.p["min_forward_speed"]
        return np.exp(-err / self.p["feet_sigma"]) * gate

    def alive(self):
        return np.ones(self.inp.num_envs, dtype=F32)

    def base_height(self):
        return np.square(self.inp.base_z - self.p["base_height_target"])

    def penalty_close_feet_xy(self):
        d = np.sqrt(np.sum(np.square(self.inp.feet_pos[:, 0, :2] - self.inp.feet_pos[:, 1, :2]), axis=1))
        thr = self.p["close_feet_threshold"]
        return np.where(d < thr, np.square(d - thr), F32(0))

    def feet_phase_contact(self):
        stance = self._heights() <= self.p["swing_height"] * F32(0.5)
        return F32(0.5) * np.sum(self._contact() == stance, axis=1).astype(F32)

    def feet_double_stance(self):
        both = np.all(self._contact(), axis=1)
        return both * np.maximum(self.inp.commands[:, 0], F32(0))

    def feet_air_time(self):
        t = self.inp.air_time
        inside = (t > self.p["air_time_min"]) & (t < self.p["air_time_max"])
        return np.sum(inside, axis=1).astype(F32)

    def forward_progress(self):
        return np.clip(self.inp.linvel[:, 0], F32(0), np.maximum(self.inp.commands[:, 0], F32(0)))

    def under_speed(self):
        return np.square(np.maximum(self.inp.commands[:, 0] - self.inp.linvel[:, 0], F32(0)))

    def lin_vel_z(self):
        return np.square(self.inp.linvel[:, 2])

    def feet_phase_contrast(self):
        h = self._heights()
        z = self.inp.feet_pos[:, :, 2]
        err = (z[:, 0] - z[:, 1]) - (h[:, 0] - h[:, 1])
        return np.exp(-np.square(err) / self.p["feet_sigma"])


def terminations(gravity_z: np.ndarray, base_z: np.ndarray, params: np.ndarray) -> np.ndarray:
    """Tilt above max_tilt OR base below min height OR either value non-finite (float64 decisions)."""
    gz = gravity_z.astype(np.float64)
    z = base_z.astype(np.float64)
    with np.errstate(invalid="ignore"):
        tilted = np.arccos(np.clip(gz, -1.0, 1.0)) > params[P["max_tilt_rad"]]
        low = z < params[P["min_base_height"]]
    return tilted | low | ~np.isfinite(gz) | ~np.isfinite(z)


def reward_and_logs(terms, names, scales: np.ndarray, n: int, ctrl_dt: float):
    """Float32 reward in slot order and float64 log means, skipping zero-scale terms."""
    total = np.zeros(n, dtype=F32)
    logs = {}
    for k, name in enumerate(names):
        if scales[k] == 0.0:
            continue
        weighted = terms[name] * F32(scales[k])
        total += weighted
        logs[f"reward/{name}"] = float(weighted.mean(dtype=np.float64))
    return total * F32(ctrl_dt), logs


def observations(inp) -> tuple[np.ndarray, np.ndarray]:
    """Actor (98, noisy) and critic (101, clean + linvel) observations in the walk layout (C3)."""
    n = inp.num_envs
    noise = inp.noise
    q_rel = inp.dof_pos - inp.default_angles  # float64, as in the kernel
    actor = np.empty((n, OBS_DIM), dtype=F32)
    actor[:, 0:3] = (inp.gyro + noise[:, 0:3]) * OBS_GYRO
    actor[:, 3:6] = -(inp.gravity + noise[:, 3:6])
    actor[:, 6:35] = q_rel + noise[:, 6:35]
    actor[:, 35:64] = (inp.dof_vel + noise[:, 35:64]) * OBS_DOF_VEL
    actor[:, 64:93] = inp.actions
    actor[:, 93:96] = inp.commands
    actor[:, 96:98] = inp.gait_phase
    critic = np.empty((n, CRITIC_DIM), dtype=F32)
    critic[:, 0:3] = inp.gyro * OBS_GYRO
    critic[:, 3:6] = -inp.gravity
    critic[:, 6:35] = q_rel
    critic[:, 35:64] = inp.dof_vel * OBS_DOF_VEL
    critic[:, 64:98] = actor[:, 64:98]
    critic[:, 98:101] = inp.linvel * OBS_LINVEL
    return actor, critic


def update_state(inp: WalkInputs) -> EnvOutputs:
    """Reward, terminations, per-term logs and (for walk-layout profiles) actor/critic observations."""
    n = inp.num_envs
    with np.errstate(invalid="ignore", over="ignore"):
        reward, logs = reward_and_logs(Terms(inp), TERMS, inp.scales, n, inp.params[P["ctrl_dt"]])
    done = terminations(inp.gravity[:, 2], inp.base_z, inp.params)
    if inp.observations:
        actor, critic = observations(inp)
    else:
        actor, critic = np.empty((n, 0), F32), np.empty((n, 0), F32)
    return EnvOutputs(reward=reward, terminated=done, actor_obs=actor, critic_obs=critic, term_logs=logs)
