"""Seeded inputs of the 15-term env-overhead probe (docs/workloads.md D).

The state is the walk state of C5 (the probe is joystick-style); what differs: the 15 term slots and
scales, feet sigma 0.008, pose weights with 2.0 at indices 1 and 7, pre-generated Gaussian noise, and a
final-observation copy of the first 2% of rows (which are also the rows forced to terminate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.envs.base import active_scales
from rlperf.envs.walk import inputs as walk

DONE_FRAC = walk.DONE_FRAC
TERMS = (
    "tracking_lin_vel", "tracking_ang_vel", "tracking_pose", "penalty_ang_vel_xy", "penalty_orientation",
    "penalty_action_rate", "penalty_action_smooth", "penalty_feet_ori", "penalty_close_feet_xy",
    "feet_phase", "feet_phase_contrast", "feet_phase_contact", "feet_double_stance", "base_height", "alive",
)
SCALES = dict(tracking_lin_vel=1.5, tracking_ang_vel=0.8, tracking_pose=2.0, penalty_ang_vel_xy=-1.0,
              penalty_orientation=-8.0, penalty_action_rate=-2.5, penalty_action_smooth=-1.0,
              penalty_feet_ori=-3.0, penalty_close_feet_xy=-2.0, feet_phase=5.0, feet_phase_contrast=2.0,
              feet_phase_contact=3.0, feet_double_stance=-1.5, base_height=-20.0, alive=10.0)
PROFILES = ("default",)
PARAMS = {**walk.BASE_PARAMS, "feet_sigma": 0.008}
# Gaussian noise sigma per packed column: gyro 0.2, gravity 0.05, dof_pos 0.03, dof_vel 1.5.
NOISE_SIGMA = np.concatenate([np.full(3, 0.2), np.full(3, 0.05), np.full(29, 0.03), np.full(29, 1.5)])


def pose_weights() -> np.ndarray:
    weights = walk.pose_weights()
    weights[[1, 7]] = 2.0
    return weights


@dataclass
class ProbeInputs(walk.WalkInputs):
    """Walk-shaped state plus the number of leading rows whose observations go to the final-obs copy."""

    num_done: int = 0


def make_inputs(num_envs: int, profile: str = "default", *, seed: int = 0,
                noise_level: float = 1.0) -> ProbeInputs:
    """Seeded probe inputs; `noise_level` 0 gives the parity setting."""
    if profile not in PROFILES:
        raise ValueError(f"probe has one profile: {PROFILES[0]}")
    rng = np.random.default_rng(seed)
    state = walk.sample_state(rng, num_envs)
    walk.force_terminations(state, num_envs)
    noise = rng.normal(0.0, 1.0, (num_envs, walk.NOISE_DIM)) * NOISE_SIGMA * noise_level
    upper = np.zeros(walk.ACT_DIM)  # unused by the probe; kept so the walk layout stays one type
    return ProbeInputs(profile=profile, **state, noise=np.ascontiguousarray(noise, dtype=np.float32),
                       default_angles=np.zeros(walk.ACT_DIM), pose_weights=pose_weights(),
                       upper_weights=upper, scales=active_scales(SCALES, TERMS),
                       params=np.array([PARAMS[name] for name in walk.PARAMS], dtype=np.float64),
                       observations=True, num_done=int(num_envs * DONE_FRAC))


poison_rows = walk.poison_rows


def make_parity_inputs(num_envs: int, profile: str = "default", *, seed: int = 0) -> ProbeInputs:
    """Noise-free probe inputs reaching every term and termination branch (close feet, tilt); see walk."""
    inputs = make_inputs(num_envs, profile, seed=seed, noise_level=0.0)
    walk.cover_all_branches(inputs, np.random.default_rng([seed, 1]))
    return inputs
