"""Fast numpy float32 g1_walk_flat update_state: the parity oracle and the baseline speedups are quoted on.

Written as a numpy programmer would for 8k-32k envs: every array stays float32, row reductions over the
29 joints go through `einsum` (no squared temporary), 2- and 3-wide reductions are column arithmetic,
shared intermediates (swing heights, foot contacts) are computed once per call, only active terms are
evaluated, and observations are written straight into their column blocks with `out=`. The literal
one-expression-per-term version stays in `reference_literal.py`; tests keep the two within tolerance.

Terminations: `acos(clip(g_z)) > max_tilt` is decided as `g_z < cos(max_tilt)` (acos is decreasing on
[-1, 1], so the two agree for any max_tilt in (0, pi)), in float64, with the non-finite guard on both
values; the fused kernel uses the same float64 threshold, computed once on the host.
"""

from __future__ import annotations

import math

import numpy as np

from rlperf.envs.base import EnvOutputs
from rlperf.envs.walk.inputs import CRITIC_DIM, OBS_DIM, P, TERMS, WalkInputs

F32 = np.float32
OBS_GYRO, OBS_DOF_VEL, OBS_LINVEL = F32(0.25), F32(0.05), F32(2.0)
TWO_PI, PI = F32(2 * np.pi), F32(np.pi)


def row_sumsq(a: np.ndarray) -> np.ndarray:
    """sum_j a[:, j]^2 without materialising a^2."""
    return np.einsum("ij,ij->i", a, a)


def swing_height(phase: np.ndarray, swing) -> np.ndarray:
    """Cubic-Bezier foot height target of the gait phase (C3), float32, one pass per branch."""
    x = np.fmod(phase + PI, TWO_PI)
    x /= TWO_PI
    up = x <= F32(0.5)
    t = x * F32(2)
    t[~up] -= F32(1)
    b = t * t * t + F32(3) * t * t * (F32(1) - t)
    np.subtract(F32(1), b, out=b, where=~up)
    b *= swing
    return b


class Terms:
    """Float32 term arrays computed on demand; shared intermediates are cached once per call."""

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

    def _shared(self, key: str, make):
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def contact(self) -> np.ndarray:
        """(N, 2) bool: a foot is in contact if any of its 4 sensors reads > 0.5."""
        return self._shared("_contact", lambda: (self.inp.contacts > F32(0.5)).any(axis=2))

    def heights(self) -> np.ndarray:
        return self._shared("_heights", lambda: swing_height(self.inp.gait_phase, self.p["swing_height"]))

    def tracking_lin_vel(self):
        ex = self.inp.commands[:, 0] - self.inp.linvel[:, 0]
        ey = self.inp.commands[:, 1] - self.inp.linvel[:, 1]
        ex *= ex
        ey *= ey
        ex += ey
        ex /= -self.p["tracking_sigma"]
        return np.exp(ex, out=ex)

    def tracking_ang_vel(self):
        e = self.inp.commands[:, 2] - self.inp.gyro[:, 2]
        e *= e
        e /= -self.p["tracking_sigma"]
        return np.exp(e, out=e)

    def _sq2(self, a):
        return a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1]

    def ang_vel_xy(self):
        return self._sq2(self.inp.gyro)

    def orientation(self):
        return self._sq2(self.inp.gravity)

    def action_rate(self):
        return row_sumsq(self.inp.actions - self.inp.last_actions)

    def _pose(self, weights):
        dev = self.inp.dof_pos - self.inp.default_angles.astype(F32)
        return np.einsum("ij,ij,j->i", dev, dev, weights.astype(F32))  # no BLAS: its pool would compete

    def pose(self):
        return self._pose(self.inp.pose_weights)

    def upper_body_pose(self):
        return self._pose(self.inp.upper_weights)

    def penalty_feet_ori(self):
        q = self.inp.feet_quat
        return self._sq2(q[:, 0, 1:3]) + self._sq2(q[:, 1, 1:3])

    def feet_phase(self):
        h = self.heights()
        el = self.inp.feet_pos[:, 0, 2] - h[:, 0]
        er = self.inp.feet_pos[:, 1, 2] - h[:, 1]
        el *= el
        er *= er
        el += er
        el /= -self.p["feet_sigma"]
        np.exp(el, out=el)
        el *= np.maximum(self.inp.linvel[:, 0], F32(0)) >= self.p["min_forward_speed"]
        return el

    def alive(self):
        return np.ones(self.inp.num_envs, dtype=F32)

    def base_height(self):
        d = self.inp.base_z - self.p["base_height_target"]
        d *= d
        return d

    def penalty_close_feet_xy(self):
        f = self.inp.feet_pos
        dx = f[:, 0, 0] - f[:, 1, 0]
        dy = f[:, 0, 1] - f[:, 1, 1]
        dx *= dx
        dy *= dy
        dx += dy
        d = np.sqrt(dx, out=dx)
        thr = self.p["close_feet_threshold"]
        return np.where(d < thr, np.square(d - thr), F32(0))

    def feet_phase_contact(self):
        stance = self.heights() <= self.p["swing_height"] * F32(0.5)
        return F32(0.5) * np.count_nonzero(self.contact() == stance, axis=1).astype(F32)

    def feet_double_stance(self):
        both = self.contact().all(axis=1)
        return both * np.maximum(self.inp.commands[:, 0], F32(0))

    def feet_air_time(self):
        t = self.inp.air_time
        inside = (t > self.p["air_time_min"]) & (t < self.p["air_time_max"])
        return np.count_nonzero(inside, axis=1).astype(F32)

    def forward_progress(self):
        return np.clip(self.inp.linvel[:, 0], F32(0), np.maximum(self.inp.commands[:, 0], F32(0)))

    def under_speed(self):
        u = np.maximum(self.inp.commands[:, 0] - self.inp.linvel[:, 0], F32(0))
        u *= u
        return u

    def lin_vel_z(self):
        return np.square(self.inp.linvel[:, 2])

    def feet_phase_contrast(self):
        h = self.heights()
        z = self.inp.feet_pos[:, :, 2]
        err = (z[:, 0] - z[:, 1]) - (h[:, 0] - h[:, 1])
        err *= err
        err /= -self.p["feet_sigma"]
        return np.exp(err, out=err)


def cos_max_tilt(params: np.ndarray) -> float:
    """The float64 tilt threshold on g_z shared by this reference and the fused kernels."""
    return math.cos(float(params[P["max_tilt_rad"]]))


def terminations(gravity_z: np.ndarray, base_z: np.ndarray, params: np.ndarray) -> np.ndarray:
    """Tilt above max_tilt OR base below min height OR either value non-finite (float64 decisions)."""
    gz = gravity_z.astype(np.float64)
    z = base_z.astype(np.float64)
    with np.errstate(invalid="ignore"):
        done = gz < cos_max_tilt(params)
        done |= z < params[P["min_base_height"]]
    done |= ~np.isfinite(gz)
    done |= ~np.isfinite(z)
    return done


def reward_and_logs(terms, names, scales: np.ndarray, n: int, ctrl_dt: float):
    """Float32 reward in slot order and float64 log means, skipping zero-scale terms."""
    total = np.zeros(n, dtype=F32)
    weighted = np.empty(n, dtype=F32)
    logs = {}
    for k, name in enumerate(names):
        if scales[k] == 0.0:
            continue
        np.multiply(terms[name], F32(scales[k]), out=weighted)
        total += weighted
        logs[f"reward/{name}"] = float(weighted.mean(dtype=np.float64))
    total *= F32(ctrl_dt)
    return total, logs


def observations(inp) -> tuple[np.ndarray, np.ndarray]:
    """Actor (98, noise then scale) and critic (101, clean + linvel) rows in the walk layout (C3)."""
    n = inp.num_envs
    noise = inp.noise
    actor = np.empty((n, OBS_DIM), dtype=F32)
    critic = np.empty((n, CRITIC_DIM), dtype=F32)
    q_rel = critic[:, 6:35]
    np.subtract(inp.dof_pos, inp.default_angles.astype(F32), out=q_rel)
    np.add(inp.gyro, noise[:, 0:3], out=actor[:, 0:3])
    actor[:, 0:3] *= OBS_GYRO
    np.add(inp.gravity, noise[:, 3:6], out=actor[:, 3:6])
    np.negative(actor[:, 3:6], out=actor[:, 3:6])
    np.add(q_rel, noise[:, 6:35], out=actor[:, 6:35])
    np.add(inp.dof_vel, noise[:, 35:64], out=actor[:, 35:64])
    actor[:, 35:64] *= OBS_DOF_VEL
    actor[:, 64:93] = inp.actions
    actor[:, 93:96] = inp.commands
    actor[:, 96:98] = inp.gait_phase
    np.multiply(inp.gyro, OBS_GYRO, out=critic[:, 0:3])
    np.negative(inp.gravity, out=critic[:, 3:6])
    np.multiply(inp.dof_vel, OBS_DOF_VEL, out=critic[:, 35:64])
    critic[:, 64:98] = actor[:, 64:98]
    np.multiply(inp.linvel, OBS_LINVEL, out=critic[:, 98:101])
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
