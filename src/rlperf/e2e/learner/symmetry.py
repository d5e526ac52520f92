"""Left/right mirror augmentation of g1_walk_flat learner batches (`algo.use_symmetry`).

Why: with `use_symmetry` the replay is sampled at `batch_size // 2` rows per update and each sampled
batch is concatenated with its mirror image (the robot reflected through its sagittal x-z plane), so the
networks see `batch_size` rows as the reference does and learn a policy and critics that treat left and
right alike. Observations, next observations, actions and both critic observations are mirrored; reward,
done and truncated are copied (every walk reward term is mirror-invariant).

Why derived, not typed: the joint order is the MuJoCo model's (`dof_pos = qpos[7:]`, the hinge joints in
qpos order; `ctrl[j]` drives actuator j's joint), so the joint permutation and signs come from those names
by one rule: `left_*` <-> `right_*`, roll and yaw joints negated (waist roll/yaw have no partner, so they
only flip), every other joint (pitch, knee, elbow: axes along y) keeps its sign. The column blocks follow
the walk kernel's row writer, `rlperf.envs.walk.rows.write_obs_row`, which is the ground truth for the
layout; tests check the maps against the kernel (mirrored state in, mirrored row out) and against the
model's joint axes.

Under the mirror M = diag(1, -1, 1): a polar vector (linear velocity, gravity) maps to (x, -y, z); an
axial one (angular velocity) to det(M) M w = (-x, y, -z); the command (v_x, v_y, w_z) to (v_x, -v_y,
-w_z); the two feet's gait phases swap. `mirror(x) = x[:, perm] * sign` per field: one index_select and
one multiply on the learner's device, no loop over rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from rlperf.errors import UsageError
from rlperf.replay.storage import Batch

LEFT, RIGHT = "left_", "right_"
NEGATED = ("roll", "yaw")  # rotations about x and z flip under the sagittal mirror; about y they do not

# Vector kinds of the non-joint blocks: (permutation, sign) of their components.
POLAR = ((0, 1, 2), (1.0, -1.0, 1.0))  # linear velocity, gravity: negate y
AXIAL = ((0, 1, 2), (-1.0, 1.0, -1.0))  # angular velocity (gyro): negate x and z
COMMAND = ((0, 1, 2), (1.0, -1.0, -1.0))  # (v_x, v_y, w_z): negate v_y and the yaw rate
FEET = ((1, 0), (1.0, 1.0))  # (left, right) gait phase: swap the feet

# The walk rows as rows.write_obs_row writes them (docs/workloads.md C3): (name, start, stop, kind).
# "joints" are in the model's joint order (dof_pos/dof_vel), "actions" in its actuator order.
ACTOR_BLOCKS = (
    ("gyro", 0, 3, "axial"),  # (gyro + n) * 0.25
    ("gravity", 3, 6, "polar"),  # -(gravity + n): the sign of the whole vector leaves y's flip as is
    ("dof_pos", 6, 35, "joints"),  # (q - q0) + n; q0 (keyframe ctrl) is itself mirror-symmetric
    ("dof_vel", 35, 64, "joints"),  # (dq + n) * 0.05
    ("last_action", 64, 93, "actions"),  # the applied action: ctrl = action * scale + q0
    ("command", 93, 96, "command"),
    ("gait_phase", 96, 98, "feet"),
)
CRITIC_BLOCKS = (*ACTOR_BLOCKS, ("linvel", 98, 101, "polar"))  # the same without noise, plus 2 * linvel


@dataclass(frozen=True)
class G1Order:
    """The model's joint names in dof_pos order and its actuators' joint names in action order."""

    joints: tuple[str, ...]
    actuators: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def g1_order() -> G1Order:
    """Read from the G1 MuJoCo model (rlperf.e2e.collector.assets.load_model); needs the e2e extra."""
    from rlperf.e2e.collector.assets import load_model, require_mujoco

    mujoco = require_mujoco()
    model, _ = load_model()
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    hinges.sort(key=lambda j: int(model.jnt_qposadr[j]))
    if [int(model.jnt_qposadr[j]) for j in hinges] != list(range(7, model.nq)):
        raise RuntimeError("G1 model: the hinge joints do not fill qpos[7:] one column each")
    joints = tuple(model.joint(j).name for j in hinges)
    actuators = tuple(model.joint(int(model.actuator_trnid[a][0])).name for a in range(model.nu))
    return G1Order(joints, actuators)


def partner(name: str) -> str:
    """The mirror joint's name: left_* <-> right_*, any other name is its own partner."""
    for a, b in ((LEFT, RIGHT), (RIGHT, LEFT)):
        if name.startswith(a):
            return b + name[len(a):]
    return name


def joint_sign(name: str) -> float:
    """-1 for roll and yaw joints (rotations about x and z), +1 otherwise (pitch, knee, elbow)."""
    return -1.0 if set(name.split("_")) & set(NEGATED) else 1.0


def joint_maps(names: tuple[str, ...]) -> tuple[list[int], list[float]]:
    """perm, sign with mirrored[:, i] = sign[i] * x[:, perm[i]] over joints in `names` order."""
    index = {n: i for i, n in enumerate(names)}
    missing = [n for n in names if partner(n) not in index]
    if missing:
        raise ValueError(f"joints without a mirror partner: {', '.join(missing)}")
    return [index[partner(n)] for n in names], [joint_sign(n) for n in names]


def block_maps(blocks, order: G1Order) -> tuple[list[int], list[float]]:
    """The whole row's perm and sign from its blocks; checks the blocks tile the row."""
    kinds = {"polar": POLAR, "axial": AXIAL, "command": COMMAND, "feet": FEET,
             "joints": joint_maps(order.joints), "actions": joint_maps(order.actuators)}
    perm: list[int] = []
    sign: list[float] = []
    for name, start, stop, kind in blocks:
        p, s = kinds[kind]
        if start != len(perm) or stop - start != len(p):
            raise ValueError(f"block {name} [{start}, {stop}) does not fit a {kind} map of {len(p)} at {len(perm)}")
        perm += [start + k for k in p]
        sign += list(s)
    return perm, sign


class ColumnMirror:
    """One row layout's mirror on one device: `x.index_select(-1, perm) * sign`."""

    def __init__(self, perm, sign, device: torch.device | str = "cpu"):
        self.perm = torch.as_tensor(perm, dtype=torch.long, device=device)
        self.sign = torch.as_tensor(sign, dtype=torch.float32, device=device)

    @property
    def width(self) -> int:
        return int(self.perm.numel())

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x.index_select(-1, self.perm) * self.sign.to(x.dtype)


class BatchMirror:
    """Mirror maps of the actor obs, critic obs and actions; `augment(b)` is b with its mirror appended."""

    def __init__(self, order: G1Order, device: torch.device | str = "cpu"):
        self.order = order
        self.actor = ColumnMirror(*block_maps(ACTOR_BLOCKS, order), device)
        self.critic = ColumnMirror(*block_maps(CRITIC_BLOCKS, order), device)
        self.action = ColumnMirror(*joint_maps(order.actuators), device)

    def mirror(self, b: Batch) -> Batch:
        """The mirror image of every row of `b` (reward, done and truncated unchanged)."""
        return Batch(obs=self.actor(b.obs), next_obs=self.actor(b.next_obs), actions=self.action(b.actions),
                     rewards=b.rewards, dones=b.dones, truncated=b.truncated, critic=self.critic(b.critic),
                     next_critic=self.critic(b.next_critic))

    def augment(self, b: Batch) -> Batch:
        """`b`'s rows followed by their mirror images: twice the rows."""
        return Batch(*(torch.cat([f, m]) for f, m in zip(b, self.mirror(b))))


def walk_mirror(obs_dim: int, critic_dim: int, action_dim: int, device: torch.device | str = "cpu",
                order: G1Order | None = None) -> BatchMirror:
    """The g1_walk_flat mirror for these dims; other layouts (motion tracking) have no maps."""
    width = (ACTOR_BLOCKS[-1][2], CRITIC_BLOCKS[-1][2])
    if (obs_dim, critic_dim) != width:
        raise UsageError(f"algo.use_symmetry: mirror maps exist for the g1_walk_flat rows only (obs {width[0]}, "
                         f"critic {width[1]}), not obs {obs_dim} / critic {critic_dim}; set algo.use_symmetry=false")
    mirror = BatchMirror(order or g1_order(), device)
    if mirror.action.width != action_dim:
        raise UsageError(f"algo.use_symmetry: the G1 model has {mirror.action.width} actuators, not {action_dim}")
    return mirror


def note(use_symmetry: bool, learner_batch: int) -> str:
    """The learner note every e2e result records."""
    if not use_symmetry:
        return "off (use_symmetry false)"
    return (f"on: each {learner_batch:,}-row batch plus its left/right mirror, {2 * learner_batch:,} rows "
            f"per update (rlperf.e2e.learner.symmetry)")
