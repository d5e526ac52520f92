"""Seeded synthetic g1_motion_tracking state (docs/workloads.md C5) plus preallocated outputs.

Layout: one C-contiguous float32 array per field with the env index leading, so the fused kernel
reads each env's bodies from a few contiguous runs and the numpy reference vectorises over envs
unchanged; shared constants are float64 (C4). Every array is freshly allocated and writable, so
all inputs give the kernel exactly one specialisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.envs.base import NCHUNKS, log_partials
from rlperf.envs.motion_tracking.profiles import ANCHOR, NUM_BODIES, NUM_DOF, NUM_TERMS, Profile, get_profile

ACTOR_DIM = 160
CRITIC_DIM = 289
FORCED_TERMINATION_FRACTION = 0.02
FORCED_CONTACT_FRACTION = 0.01


@dataclass
class MotionTrackingInputs:
    """State for one update_state call of `num_envs` envs, and the buffers the kernel writes."""

    profile: Profile
    noise_level: float
    # reference motion at the current frame
    motion_joint_pos: np.ndarray  # (N, 29)
    motion_joint_vel: np.ndarray  # (N, 29)
    motion_body_pos: np.ndarray  # (N, 14, 3)
    motion_body_quat: np.ndarray  # (N, 14, 4) wxyz
    motion_body_lin_vel: np.ndarray  # (N, 14, 3)
    motion_body_ang_vel: np.ndarray  # (N, 14, 3)
    # simulator state
    robot_body_pos: np.ndarray
    robot_body_quat: np.ndarray
    robot_body_lin_vel: np.ndarray
    robot_body_ang_vel: np.ndarray
    linvel: np.ndarray  # (N, 3) pelvis-local
    gyro: np.ndarray  # (N, 3)
    dof_pos: np.ndarray  # (N, 29)
    dof_vel: np.ndarray  # (N, 29)
    current_actions: np.ndarray  # (N, 29)
    last_actions: np.ndarray  # (N, 29)
    # shared float64 constants
    default_angles: np.ndarray  # (29,)
    joint_lower: np.ndarray  # (29,)
    joint_upper: np.ndarray  # (29,)
    # actor noise, U(-1, 1) * level * scale, zeros at level 0
    noise_linvel: np.ndarray  # (N, 3)
    noise_gyro: np.ndarray  # (N, 3)
    noise_joint_pos: np.ndarray  # (N, 29)
    noise_dof_vel: np.ndarray  # (N, 29)
    # outputs of the fused kernel
    reward: np.ndarray  # (N,) float32
    terminated: np.ndarray  # (N,) bool
    actor_obs: np.ndarray  # (N, 160) float32
    critic_obs: np.ndarray  # (N, 289) float32
    logs: np.ndarray  # (nchunks, 16) float64, one padded row of weighted-term sums per chunk

    @property
    def num_envs(self) -> int:
        return self.dof_pos.shape[0]

    @property
    def nchunks(self) -> int:
        return self.logs.shape[0]


def num_chunks(num_envs: int) -> int:
    """Fixed by the env count alone, so per-chunk sums (and the logs) are identical for any thread count."""
    return max(1, min(num_envs, NCHUNKS))


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def _unit(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def make_inputs(
    num_envs: int, profile: str | Profile, *, seed: int = 0, noise_level: float = 1.0
) -> MotionTrackingInputs:
    """C5 generator: target state, motion = target + small noise, robot = target + larger noise."""
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    prof = get_profile(profile)
    rng = np.random.default_rng(seed)
    n, b, j = num_envs, NUM_BODIES, NUM_DOF

    tgt_pos = rng.uniform(-1.0, 1.0, (n, b, 3))
    tgt_quat = _unit(rng.normal(size=(n, b, 4)))
    tgt_lin = rng.uniform(-2.0, 2.0, (n, b, 3))
    tgt_ang = rng.uniform(-3.0, 3.0, (n, b, 3))
    tgt_jp = rng.uniform(-1.0, 1.0, (n, j))
    tgt_jv = rng.uniform(-2.0, 2.0, (n, j))

    def around(sig_pos, sig_quat, sig_vel, sig_jp, sig_jv):
        return (
            tgt_pos + rng.normal(0.0, sig_pos, tgt_pos.shape),
            _unit(tgt_quat + rng.normal(0.0, sig_quat, tgt_quat.shape)),
            tgt_lin + rng.normal(0.0, sig_vel, tgt_lin.shape),
            tgt_ang + rng.normal(0.0, sig_vel, tgt_ang.shape),
            tgt_jp + rng.normal(0.0, sig_jp, tgt_jp.shape),
            tgt_jv + rng.normal(0.0, sig_jv, tgt_jv.shape),
        )

    m_pos, m_quat, m_lin, m_ang, m_jp, m_jv = around(0.04, 0.02, 0.1, 0.03, 0.05)
    r_pos, r_quat, r_lin, r_ang, r_jp, r_jv = around(0.06, 0.03, 0.1, 0.05, 0.1)

    linvel = rng.uniform(-1.0, 1.0, (n, 3))
    gyro = rng.uniform(-1.0, 1.0, (n, 3))
    actions = rng.uniform(-1.0, 1.0, (n, j))
    last_actions = actions + rng.normal(0.0, 0.1, (n, j))

    # Forced events. The lift is set relative to the motion anchor (not added to the noisy robot z),
    # so |a_z - r_z| = 0.6 exceeds every profile's anchor-z threshold and those rows always terminate.
    lifted = int(n * FORCED_TERMINATION_FRACTION)
    r_pos[:lifted, ANCHOR, 2] = m_pos[:lifted, ANCHOR, 2] + 0.6
    if "undesired_contacts" in prof.active():
        r_pos[: int(n * FORCED_CONTACT_FRACTION), 0, 2] = 0.0

    lin_s, gyro_s, jp_s, jv_s = prof.noise_scales

    def noise(shape, scale):
        if noise_level <= 0.0:
            return np.zeros(shape, dtype=np.float32)
        return (rng.uniform(-1.0, 1.0, shape) * (noise_level * scale)).astype(np.float32)

    nchunks = num_chunks(n)
    return MotionTrackingInputs(
        profile=prof,
        noise_level=float(noise_level),
        motion_joint_pos=_f32(m_jp),
        motion_joint_vel=_f32(m_jv),
        motion_body_pos=_f32(m_pos),
        motion_body_quat=_f32(m_quat),
        motion_body_lin_vel=_f32(m_lin),
        motion_body_ang_vel=_f32(m_ang),
        robot_body_pos=_f32(r_pos),
        robot_body_quat=_f32(r_quat),
        robot_body_lin_vel=_f32(r_lin),
        robot_body_ang_vel=_f32(r_ang),
        linvel=_f32(linvel),
        gyro=_f32(gyro),
        dof_pos=_f32(r_jp),
        dof_vel=_f32(r_jv),
        current_actions=_f32(actions),
        last_actions=_f32(last_actions),
        default_angles=np.linspace(-0.2, 0.2, j),
        joint_lower=np.full(j, -2.5),
        joint_upper=np.full(j, 2.5),
        noise_linvel=noise((n, 3), lin_s),
        noise_gyro=noise((n, 3), gyro_s),
        noise_joint_pos=noise((n, j), jp_s),
        noise_dof_vel=noise((n, j), jv_s),
        reward=np.zeros(n, dtype=np.float32),
        terminated=np.zeros(n, dtype=np.bool_),
        actor_obs=np.zeros((n, ACTOR_DIM), dtype=np.float32),
        critic_obs=np.zeros((n, CRITIC_DIM), dtype=np.float32),
        logs=log_partials(NUM_TERMS, nchunks),
    )


# Parity coverage (not timing): shares of rows pushed into branches the C5 inputs never reach.
JOINT_LIMIT_EVERY = 5  # rows i % 5 == 2: two joints beyond the +-2.5 limits (joint_limit active)
CONTACT_EVERY = 10  # rows i % 10 == 4: body 2 (left knee) below 0.05 (undesired_contacts active)
ORI_TERM_EVERY = 50  # rows i % 50 == 7: robot anchor flipped (anchor-orientation termination only)
EE_TERM_EVERY = 50  # rows i % 50 == 11: robot left ankle 0.7 above its reference (EE termination only)


def make_parity_inputs(num_envs: int, profile: str | Profile, *, seed: int = 0) -> MotionTrackingInputs:
    """Noise-free inputs that exercise every term and termination branch (C5 inputs stay as they are).

    On top of `make_inputs(noise_level=0)` (whose first 2% trip the anchor-z termination): joint-limit
    violations, undesired contacts, and rows that trip exactly one of the anchor-orientation and the
    end-effector terminations. The contact termination is reached by a profile with
    terminate_on_undesired_contacts set (the contact rows are there whatever the profile).
    """
    inputs = make_inputs(num_envs, profile, seed=seed, noise_level=0.0)
    rows = np.arange(num_envs)
    over = rows[rows % JOINT_LIMIT_EVERY == 2]
    inputs.dof_pos[over, 3] = 2.7
    inputs.dof_pos[over, 17] = -2.9
    inputs.robot_body_pos[rows[rows % CONTACT_EVERY == 4], 2, 2] = 0.01
    flipped = rows[rows % ORI_TERM_EVERY == 7]
    # gz(q) = 2(x^2 + y^2) - 1 is -1 for (1, 0, 0, 0) and +1 for (0, 1, 0, 0): pick the one opposite the
    # motion anchor's sign, so |gz(a) - gz(r)| >= 1 > every threshold below 2; z heights stay as they were
    a_q = inputs.motion_body_quat[flipped, ANCHOR]
    upright = (2.0 * (a_q[:, 1] ** 2 + a_q[:, 2] ** 2) - 1.0) >= 0.0
    inputs.robot_body_quat[flipped, ANCHOR] = np.where(upright[:, None], np.float32([1, 0, 0, 0]),
                                                       np.float32([0, 1, 0, 0]))
    lifted = rows[rows % EE_TERM_EVERY == 11]
    inputs.robot_body_pos[lifted, 3, 2] = inputs.motion_body_pos[lifted, 3, 2] + 0.7
    return inputs
