"""The state snapshot both kernels read, taken from MjData (qpos, qvel, sensordata rows) in one pass.

Why one snapshot: the walk and motion-tracking kernels take different arrays, but every value comes from
the same physics rows; extracting once keeps the getter cost visible and identical across kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.e2e.collector import quat
from rlperf.e2e.collector.assets import FEET_SITES, TRACKED_BODIES

FOOT_FLOOR_SENSORS = ("left_foot_floor_found", "right_foot_floor_found")
DOWN = np.array([0.0, 0.0, -1.0])


@dataclass
class Snapshot:
    """Float32 state of N envs (env index leading, C-contiguous)."""

    base_linvel: np.ndarray  # (N, 3) pelvis-local velocimeter
    base_angvel: np.ndarray  # (N, 3) gyro at the torso IMU
    projected_gravity: np.ndarray  # (N, 3) R_torso^T (0, 0, -1): (0, 0, -1) when upright
    dof_pos: np.ndarray  # (N, 29)
    dof_vel: np.ndarray  # (N, 29)
    base_z: np.ndarray  # (N,) pelvis height
    feet_pos: np.ndarray  # (N, 2, 3) left, right foot sites, world
    feet_quat: np.ndarray  # (N, 2, 4) wxyz
    foot_contacts: np.ndarray  # (N, 2) float32 1/0: the foot-floor contact sensor found a contact
    body_pos: np.ndarray  # (N, 14, 3) world, kernel body order
    body_quat: np.ndarray  # (N, 14, 4)
    body_linvel: np.ndarray  # (N, 14, 3) world frame
    body_angvel: np.ndarray  # (N, 14, 3) world frame

    @property
    def num_envs(self) -> int:
        return self.base_z.shape[0]


class StateReader:
    """Maps sensordata columns (by sensor name) and qpos/qvel columns to Snapshot fields."""

    def __init__(self, sensors: dict):
        self._cols = {name: np.arange(s.start, s.stop) for name, s in sensors.items()}

        def block(names):
            return np.concatenate([self._cols[n] for n in names])

        self._body = {kind: block([f"rlperf_{b}_{kind}" for b in TRACKED_BODIES])
                      for kind in ("pos", "quat", "linvel", "angvel")}
        self._feet_pos = block([f"rlperf_{s}_pos" for s in FEET_SITES])
        self._feet_quat = block([f"rlperf_{s}_quat" for s in FEET_SITES])
        self._contacts = block(FOOT_FLOOR_SENSORS)

    def read(self, qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray) -> Snapshot:
        n = qpos.shape[0]
        s = sensordata
        f32 = np.float32

        def cols(name):
            return s[:, self._cols[name]]

        torso_q = cols("orientation_torso")
        return Snapshot(
            base_linvel=np.ascontiguousarray(cols("local_linvel_pelvis"), f32),
            base_angvel=np.ascontiguousarray(cols("gyro_torso"), f32),
            projected_gravity=np.ascontiguousarray(quat.rotate_inverse(torso_q, np.broadcast_to(DOWN, (n, 3))), f32),
            dof_pos=np.ascontiguousarray(qpos[:, 7:], f32),
            dof_vel=np.ascontiguousarray(qvel[:, 6:], f32),
            base_z=np.ascontiguousarray(qpos[:, 2], f32),
            feet_pos=np.ascontiguousarray(s[:, self._feet_pos].reshape(n, 2, 3), f32),
            feet_quat=np.ascontiguousarray(s[:, self._feet_quat].reshape(n, 2, 4), f32),
            foot_contacts=np.ascontiguousarray(s[:, self._contacts] > 0.5, f32),
            body_pos=np.ascontiguousarray(s[:, self._body["pos"]].reshape(n, 14, 3), f32),
            body_quat=np.ascontiguousarray(s[:, self._body["quat"]].reshape(n, 14, 4), f32),
            body_linvel=np.ascontiguousarray(s[:, self._body["linvel"]].reshape(n, 14, 3), f32),
            body_angvel=np.ascontiguousarray(s[:, self._body["angvel"]].reshape(n, 14, 3), f32),
        )
