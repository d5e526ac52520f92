"""g1_motion_tracking reward profiles (docs/workloads.md C2, C7) as plain data.

The fused kernel reads scales, stds and thresholds from float64 arrays at call time, so a new
profile is just another `Profile` value: it never triggers a recompile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.errors import choice_error

# The kernel's 12 term slots, in accumulation order (C4).
TERMS: tuple[str, ...] = (
    "motion_global_root_pos",
    "motion_global_root_ori",
    "motion_body_pos",
    "motion_body_ori",
    "motion_body_lin_vel",
    "motion_body_ang_vel",
    "motion_ee_body_pos_z",
    "motion_joint_pos",
    "motion_joint_vel",
    "action_rate_l2",
    "joint_limit",
    "undesired_contacts",
)
NUM_TERMS = len(TERMS)
# std per slot (EE uses std_body_pos); the last three terms enter as plain values, std 0.
STDS: tuple[float, ...] = (0.3, 0.4, 0.3, 0.4, 1.0, 3.14, 0.3, 0.2, 1.0, 0.0, 0.0, 0.0)

NUM_BODIES = 14
ANCHOR = 7
EE_BODIES: tuple[int, ...] = (3, 6, 10, 13)
NON_EE_BODIES: tuple[int, ...] = (0, 1, 2, 4, 5, 7, 8, 9, 11, 12)
NUM_DOF = 29
CONTACT_Z = 0.05


@dataclass(frozen=True)
class Profile:
    """One benchmark profile: 12 scales, termination thresholds and actor-noise scales."""

    name: str
    scales: tuple[float, ...]
    anchor_pos_z_threshold: float
    anchor_ori_threshold: float
    ee_body_pos_z_threshold: float
    terminate_on_undesired_contacts: bool = False
    ctrl_dt: float = 0.02
    # noise: (linvel, gyro, joint_angle, joint_vel); the level is chosen per make_inputs call
    noise_scales: tuple[float, float, float, float] = (0.1, 0.2, 0.01, 1.5)
    stds: tuple[float, ...] = STDS

    def __post_init__(self) -> None:
        if len(self.scales) != NUM_TERMS or len(self.stds) != NUM_TERMS:
            raise ValueError(f"profile {self.name}: need {NUM_TERMS} scales and stds")

    def active(self) -> tuple[str, ...]:
        """Names of the terms with a non-zero scale (the ones computed and logged)."""
        return tuple(t for t, s in zip(TERMS, self.scales) if s != 0.0)

    def scale_array(self) -> np.ndarray:
        return np.asarray(self.scales, dtype=np.float64)

    def std_array(self) -> np.ndarray:
        return np.asarray(self.stds, dtype=np.float64)

    def threshold_array(self) -> np.ndarray:
        """[anchor_pos_z, anchor_ori, ee_body_pos_z, terminate_on_undesired_contacts (0/1)]."""
        return np.asarray(
            (
                self.anchor_pos_z_threshold,
                self.anchor_ori_threshold,
                self.ee_body_pos_z_threshold,
                1.0 if self.terminate_on_undesired_contacts else 0.0,
            ),
            dtype=np.float64,
        )


PROFILES: dict[str, Profile] = {
    "ppo_default": Profile(
        name="ppo_default",
        scales=(1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, -0.05, -10.0, -0.1),
        anchor_pos_z_threshold=0.25,
        anchor_ori_threshold=0.8,
        ee_body_pos_z_threshold=0.25,
        noise_scales=(0.1, 0.1, 0.02, 0.3),  # G1 code defaults (C2 noise model)
    ),
    "sac_default": Profile(
        name="sac_default",
        scales=(0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, -0.1, -2.0, -0.1),
        anchor_pos_z_threshold=0.5,
        anchor_ori_threshold=0.8,
        ee_body_pos_z_threshold=0.5,
    ),
    # Every slot active; thresholds as in the SAC config.
    "full_supported": Profile(
        name="full_supported",
        scales=(1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.3, 0.4, 0.2, -0.1, -10.0, -0.1),
        anchor_pos_z_threshold=0.5,
        anchor_ori_threshold=0.8,
        ee_body_pos_z_threshold=0.5,
    ),
}


def get_profile(profile: str | Profile) -> Profile:
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise choice_error("g1_motion_tracking profile", profile, PROFILES) from None
