"""Seeded synthetic g1_walk_flat state (docs/workloads.md C5) and the three walk profiles (C3).

Everything the kernel reads at call time lives here: per-env float32 state, pre-generated noise, and the
float64 scale / parameter vectors, so a new profile or curriculum value changes data, never the kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlperf.envs.base import active_scales

ACT_DIM = 29
OBS_DIM = 98
CRITIC_DIM = 101
NOISE_DIM = 64  # packed noise columns: gyro 0-2, gravity 3-5, joint pos 6-34, joint vel 35-63
DONE_FRAC = 0.02  # reset pressure modelled by the benchmarks (C1): the first 2% of rows terminate
PENALTY_CURRICULUM = 0.5  # SAC penalty curriculum frozen at its start value (C3)

# The kernel's static superset of term slots (C3); aliases are separate slots sharing one value.
TERMS = (
    "tracking_lin_vel", "tracking_ang_vel", "penalty_ang_vel_xy", "ang_vel_xy", "penalty_orientation",
    "orientation", "penalty_action_rate", "action_rate", "pose", "upper_body_pose", "penalty_feet_ori",
    "feet_phase", "alive", "base_height", "penalty_close_feet_xy", "feet_phase_contact",
    "feet_double_stance", "feet_air_time", "forward_progress", "under_speed", "lin_vel_z",
    "feet_phase_contrast",
)
# Runtime float64 parameter vector; indices are shared by reference.py and fused.py.
PARAMS = ("ctrl_dt", "tracking_sigma", "feet_sigma", "swing_height", "base_height_target",
          "min_base_height", "max_tilt_rad", "close_feet_threshold", "min_forward_speed",
          "air_time_min", "air_time_max")
P = {name: k for k, name in enumerate(PARAMS)}

BASE_PARAMS = dict(ctrl_dt=0.02, tracking_sigma=0.25, feet_sigma=0.04, swing_height=0.09,
                   base_height_target=0.754, min_base_height=0.3, max_tilt_rad=math.radians(65.0),
                   close_feet_threshold=0.15, min_forward_speed=0.0, air_time_min=0.05, air_time_max=0.5)

SAC_SCALES = dict(tracking_lin_vel=2.0, tracking_ang_vel=1.5, penalty_ang_vel_xy=-1.0,
                  penalty_orientation=-10.0, penalty_action_rate=-4.0, pose=-0.5, penalty_feet_ori=-20.0,
                  feet_phase=5.0, alive=10.0)  # g1_walk_flat/mujoco YAML (B3)
# full_supported: every slot active. Slots without a config value get rlperf's own scale (documented).
FULL_EXTRA = dict(ang_vel_xy=-1.0, orientation=-10.0, action_rate=-4.0, upper_body_pose=-1.0,
                  base_height=-20.0, penalty_close_feet_xy=-10.0, feet_phase_contact=1.0,
                  feet_double_stance=-1.0, feet_air_time=1.0, forward_progress=1.0, under_speed=-1.0,
                  lin_vel_z=-2.0, feet_phase_contrast=1.0)


@dataclass(frozen=True)
class Profile:
    """One benchmark profile: scales (config values), parameter overrides, and the kernel's scope."""

    name: str
    scales: dict
    params: dict
    curriculum: bool  # SAC configs scale every negative scale by PENALTY_CURRICULUM
    observations: bool  # False selects the other obs layout: timed as reward + termination only

    def scale_vector(self) -> np.ndarray:
        scales = active_scales(self.scales, TERMS)
        if self.curriculum:
            scales = np.where(scales < 0, scales * PENALTY_CURRICULUM, scales)
        return scales

    def param_vector(self) -> np.ndarray:
        merged = {**BASE_PARAMS, **self.params}
        return np.array([merged[name] for name in PARAMS], dtype=np.float64)


PROFILES = {
    "ppo_default": Profile(
        "ppo_default",
        dict(tracking_lin_vel=2.0, tracking_ang_vel=0.2, feet_phase=1.0, lin_vel_z=-1.0, ang_vel_xy=-0.25,
             base_height=-500.0, orientation=-5.0, action_rate=-0.01, pose=-0.1),
        dict(feet_sigma=0.008, min_base_height=0.55, max_tilt_rad=math.radians(25.0)),
        curriculum=False, observations=False),
    "sac_default": Profile("sac_default", SAC_SCALES, dict(feet_sigma=0.04), curriculum=True,
                           observations=True),
    "full_supported": Profile("full_supported", {**SAC_SCALES, **FULL_EXTRA}, dict(feet_sigma=0.04),
                              curriculum=True, observations=True),
}

# SAC mujoco noise_config scales per packed field (B3): drawn even where the scale is 0 (C3).
NOISE_SCALES = np.concatenate([np.full(3, 0.0), np.full(3, 0.0), np.full(29, 0.01), np.full(29, 0.1)])


def pose_weights() -> np.ndarray:
    """Config pose weights (B3): legs [0.01, 1, 5, 0.01, 5, 5] x 2, then 50 for waist and arms."""
    return np.array([0.01, 1.0, 5.0, 0.01, 5.0, 5.0] * 2 + [50.0] * 17, dtype=np.float64)


@dataclass
class WalkInputs:
    """One step of walk state for N envs (C-contiguous float32) plus the profile's runtime vectors."""

    profile: str
    linvel: np.ndarray  # (N, 3) pelvis-local
    gyro: np.ndarray  # (N, 3)
    gravity: np.ndarray  # (N, 3) torso up-vector
    dof_pos: np.ndarray  # (N, 29)
    dof_vel: np.ndarray  # (N, 29)
    base_z: np.ndarray  # (N,)
    feet_pos: np.ndarray  # (N, 2, 3) left, right
    feet_quat: np.ndarray  # (N, 2, 4) wxyz
    contacts: np.ndarray  # (N, 2, 4) sensor values; a foot is in contact if any sensor > 0.5
    commands: np.ndarray  # (N, 3) v_x, v_y, w_z
    actions: np.ndarray  # (N, 29) current
    last_actions: np.ndarray  # (N, 29)
    gait_phase: np.ndarray  # (N, 2)
    air_time: np.ndarray  # (N, 2)
    noise: np.ndarray  # (N, 64) pre-generated actor-obs noise, already x level x scale
    default_angles: np.ndarray  # (29,) float64
    pose_weights: np.ndarray  # (29,) float64
    upper_weights: np.ndarray  # (29,) float64, legs zeroed
    scales: np.ndarray  # (len(TERMS),) float64, curriculum applied
    params: np.ndarray  # (len(PARAMS),) float64
    observations: bool

    @property
    def num_envs(self) -> int:
        return self.base_z.shape[0]


def _f32(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32)


def sample_state(rng: np.random.Generator, n: int) -> dict:
    """The C5 walk distributions, shared with the probe (same joystick-style state)."""
    cmd = rng.normal((0.8, 0.0, 0.1), (0.2, 0.05, 0.1), (n, 3))
    cmd[:, 0] = np.maximum(cmd[:, 0], 0.05)
    gravity = rng.normal((0.0, 0.0, 0.98), (0.02, 0.02, 0.01), (n, 3))
    gravity[:, 2] = np.clip(gravity[:, 2], -1.0, 1.0)
    actions = rng.normal(0.0, 0.2, (n, ACT_DIM))
    feet = np.empty((n, 2, 3))
    for foot, sign in ((0, -1.0), (1, 1.0)):
        feet[:, foot, 0] = sign * 0.1
        feet[:, foot, 1] = rng.normal(sign * 0.06, 0.01, n)
        feet[:, foot, 2] = rng.uniform(0.0, 0.1, n)
    quat = np.broadcast_to(np.array([[1.0, 0.01, 0.02, 0.0], [1.0, 0.02, 0.01, 0.0]]), (n, 2, 4))
    return dict(
        linvel=_f32(rng.normal((0.8, 0.0, 0.0), (0.25, 0.08, 0.08), (n, 3))),
        gyro=_f32(rng.normal((0.0, 0.0, 0.1), (0.08, 0.08, 0.15), (n, 3))),
        gravity=_f32(gravity),
        dof_pos=_f32(rng.normal(0.0, 0.03, (n, ACT_DIM))),
        dof_vel=_f32(rng.normal(0.0, 0.2, (n, ACT_DIM))),
        base_z=_f32(0.754 + rng.normal(0.0, 0.015, n)),
        feet_pos=_f32(feet),
        feet_quat=_f32(quat),
        contacts=_f32(rng.random((n, 2, 4)) > 0.45),
        commands=_f32(cmd),
        actions=_f32(actions),
        last_actions=_f32(actions + rng.normal(0.0, 0.05, (n, ACT_DIM))),
        gait_phase=_f32(rng.uniform(0.0, 2 * np.pi, (n, 2))),
        air_time=_f32(rng.uniform(0.0, 0.8, (n, 2))),
    )


def force_terminations(state: dict, n: int) -> None:
    """The first DONE_FRAC of rows fall below every profile's minimum base height."""
    state["base_z"][: int(n * DONE_FRAC)] = 0.25


def make_inputs(num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0) -> WalkInputs:
    """Seeded walk inputs; `noise_level` 0 gives the parity setting (zero noise buffers)."""
    prof = PROFILES[profile]
    rng = np.random.default_rng(seed)
    state = sample_state(rng, num_envs)
    force_terminations(state, num_envs)
    noise = rng.uniform(-1.0, 1.0, (num_envs, NOISE_DIM)) * noise_level * NOISE_SCALES
    weights = pose_weights()
    upper = weights.copy()
    upper[:12] = 0.0
    return WalkInputs(profile=profile, **state, noise=_f32(noise), default_angles=np.zeros(ACT_DIM),
                      pose_weights=weights, upper_weights=upper, scales=prof.scale_vector(),
                      params=prof.param_vector(), observations=prof.observations)


def poison_rows(inputs, rows) -> None:
    """Write NaN / +inf / -inf into termination-relevant and reward state of `rows` (parity tests)."""
    bad = (np.nan, np.inf, -np.inf)
    for k, row in enumerate(rows):
        value = bad[k % 3]
        inputs.gravity[row, 2] = value
        inputs.linvel[row, k % 3] = value
        inputs.dof_pos[row, k % ACT_DIM] = value
        if k % 2:
            inputs.base_z[row] = bad[(k + 1) % 3]


# Parity coverage (not timing): shares of rows pushed into branches the C5 inputs never reach.
CLOSE_FEET_EVERY = 4  # rows i % 4 == 1: feet xy distance < 0.15, so penalty_close_feet_xy is active
TILT_EVERY = 25  # rows i % 25 == 3: 70 deg tilt, the tilt termination of every profile
MID_HEIGHT_EVERY = 25  # rows i % 25 == 7: base z 0.45, below ppo_default's 0.55 minimum only


def make_parity_inputs(num_envs: int, profile: str, *, seed: int = 0) -> WalkInputs:
    """Noise-free inputs that exercise every term and termination branch (C5 inputs stay as they are).

    On top of `make_inputs(noise_level=0)`: a quarter of the rows get close feet (xy distance
    0.02-0.14), 4% a 70 degree tilt and 4% a base height between the profiles' minimum heights.
    """
    inputs = make_inputs(num_envs, profile, seed=seed, noise_level=0.0)
    cover_all_branches(inputs, np.random.default_rng([seed, 1]))
    return inputs


def cover_all_branches(inputs: WalkInputs, rng: np.random.Generator) -> None:
    """Edit walk-shaped state in place (shared with the probe): close feet, tilt, mid base height."""
    rows = np.arange(inputs.num_envs)
    close = rows[rows % CLOSE_FEET_EVERY == 1]
    half = rng.uniform(0.01, 0.07, (close.size, 2))  # feet at -half and +half: d = 2 |half|
    half *= (0.07 / np.maximum(np.hypot(half[:, 0], half[:, 1]), 0.07))[:, None]  # d in (0.028, 0.14]
    inputs.feet_pos[close, 0, :2] = -half
    inputs.feet_pos[close, 1, :2] = half
    tilted = rows[rows % TILT_EVERY == 3]
    tilt = math.radians(70.0)
    inputs.gravity[tilted, 0] = math.sin(tilt)
    inputs.gravity[tilted, 1] = 0.0
    inputs.gravity[tilted, 2] = math.cos(tilt)
    inputs.base_z[rows[rows % MID_HEIGHT_EVERY == 7]] = 0.45
