"""g1_motion_tracking update_state: fused kernel vs numpy reference, plus hand-computed checks of the reference."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rlperf.envs.motion_tracking import WORKLOAD
from rlperf.envs.motion_tracking.profiles import ANCHOR, PROFILES, TERMS
from rlperf.envs.motion_tracking.reference import quat_mul, rot6d

TOL = WORKLOAD.tolerances


@pytest.fixture(scope="module")
def compiled() -> float:
    """One compile (cold in the session's hermetic cache) shared by the whole module."""
    return WORKLOAD.compile()


def _run_fused(inputs, threads: int = 2):
    return WORKLOAD.fused_runner(inputs, threads)()


def _assert_logs_close(got: dict, ref: dict) -> None:
    assert got.keys() == ref.keys()
    for key, want in ref.items():
        assert abs(got[key] - want) <= TOL.log_atol + TOL.log_rtol * abs(want), (key, got[key], want)


def test_dimensions_and_shapes(compiled):
    assert (WORKLOAD.name, WORKLOAD.obs_dim, WORKLOAD.critic_dim) == ("g1_motion_tracking", 160, 289)
    assert set(WORKLOAD.profiles) == {"ppo_default", "sac_default", "full_supported"}
    inputs = WORKLOAD.make_inputs(5, "full_supported")
    for out in (WORKLOAD.reference(inputs), _run_fused(inputs)):
        assert out.reward.shape == (5,) and out.reward.dtype == np.float32
        assert out.terminated.shape == (5,) and out.terminated.dtype == np.bool_
        assert out.actor_obs.shape == (5, 160) and out.actor_obs.dtype == np.float32
        assert out.critic_obs.shape == (5, 289) and out.critic_obs.dtype == np.float32
        assert set(out.term_logs) == {f"reward/{t}" for t in TERMS}


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("num_envs", [1, 7, 513, 8192])
def test_parity_with_reference(compiled, profile, num_envs):
    inputs = WORKLOAD.make_inputs(num_envs, profile, seed=num_envs, noise_level=0.0)
    ref = WORKLOAD.reference(inputs)
    got = _run_fused(inputs)
    np.testing.assert_allclose(got.reward, ref.reward, rtol=TOL.reward_rtol, atol=TOL.reward_atol)
    np.testing.assert_array_equal(got.terminated, ref.terminated)
    np.testing.assert_allclose(got.actor_obs, ref.actor_obs, rtol=TOL.obs_rtol, atol=TOL.obs_atol)
    np.testing.assert_allclose(got.critic_obs, ref.critic_obs, rtol=TOL.obs_rtol, atol=TOL.obs_atol)
    _assert_logs_close(got.term_logs, ref.term_logs)
    assert set(got.term_logs) == {f"reward/{t}" for t in PROFILES[profile].active()}


def test_actor_noise_matches_reference(compiled):
    inputs = WORKLOAD.make_inputs(64, "sac_default", noise_level=1.0)
    assert np.any(inputs.noise_dof_vel != 0)
    ref, got = WORKLOAD.reference(inputs), _run_fused(inputs)
    np.testing.assert_allclose(got.actor_obs, ref.actor_obs, rtol=TOL.obs_rtol, atol=TOL.obs_atol)
    np.testing.assert_allclose(got.critic_obs[:, :160], ref.critic_obs[:, :160], rtol=TOL.obs_rtol, atol=TOL.obs_atol)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_terminations_exact_with_nan_and_inf(compiled):
    profile = dataclasses.replace(PROFILES["sac_default"], name="contacts", terminate_on_undesired_contacts=True)
    for prof in (PROFILES["sac_default"], profile):
        inputs = WORKLOAD.make_inputs(64, prof, noise_level=0.0)
        rp, mp, rq = inputs.robot_body_pos, inputs.motion_body_pos, inputs.robot_body_quat
        rp[:, :, 2] = np.abs(rp[:, :, 2]) + 0.1  # no natural contacts: only the edits below decide
        mp[:, :, 2] = rp[:, :, 2]
        rp[1, ANCHOR, 2] = np.nan
        rp[2, ANCHOR, 2] = np.inf
        rp[3, ANCHOR, 2] = -np.inf
        rp[4, 3, 2] = np.nan  # end effector
        rp[5, 10, 2] = np.inf
        mp[6, ANCHOR, 2] = np.nan  # motion anchor: also poisons the reference EE heights
        rq[7, ANCHOR, 1] = np.nan
        rp[8, 0, 2] = np.nan  # non-EE body: contact check only
        rp[9, 1, 2] = -np.inf
        ref, got = WORKLOAD.reference(inputs), _run_fused(inputs)
        np.testing.assert_array_equal(got.terminated, ref.terminated)
        assert ref.terminated[[2, 3, 5]].all()
        assert not ref.terminated[[1, 4, 6, 7, 8]].any()
        assert ref.terminated[9] == prof.terminate_on_undesired_contacts


def test_logs_bitwise_identical_for_1_and_2_threads(compiled):
    inputs = WORKLOAD.make_inputs(4099, "full_supported", noise_level=1.0)
    one = _run_fused(inputs, 1)
    logs_1, reward_1 = dict(one.term_logs), one.reward.copy()
    two = _run_fused(inputs, 2)
    assert two.term_logs == logs_1
    np.testing.assert_array_equal(two.reward, reward_1)


def test_forced_events(compiled):
    inputs = WORKLOAD.make_inputs(1000, "sac_default")
    out = _run_fused(inputs)
    assert out.terminated[:20].all()
    assert inputs.robot_body_pos[:10, 0, 2].tolist() == [0.0] * 10
    sac = PROFILES["sac_default"]
    without_contacts = dataclasses.replace(sac, name="no_contacts", scales=sac.scales[:11] + (0.0,))
    assert WORKLOAD.make_inputs(1000, without_contacts).robot_body_pos[0, 0, 2] != 0.0


def test_new_profile_does_not_recompile(compiled):
    kernel = WORKLOAD.kernel
    base = PROFILES["full_supported"]
    novel = dataclasses.replace(
        base, name="novel", scales=tuple(0.5 * s for s in base.scales), stds=tuple(2.0 * s for s in base.stds),
        anchor_pos_z_threshold=0.3, ee_body_pos_z_threshold=0.2, ctrl_dt=0.01,
    )
    inputs = WORKLOAD.make_inputs(33, novel, noise_level=0.0)
    ref, got = WORKLOAD.reference(inputs), _run_fused(inputs)
    np.testing.assert_allclose(got.reward, ref.reward, rtol=TOL.reward_rtol, atol=TOL.reward_atol)
    np.testing.assert_array_equal(got.terminated, ref.terminated)
    assert len(kernel.signatures) == 1


def test_rot6d_by_hand():
    np.testing.assert_array_equal(rot6d(np.array([1, 0, 0, 0], np.float32)), [1, 0, 0, 1, 0, 0])
    half = math.sqrt(0.5)  # +90 deg about z: x -> y, y -> -x
    np.testing.assert_allclose(rot6d(np.array([half, 0, 0, half])), [0, -1, 1, 0, 0, 0], atol=1e-12)


def test_penalty_terms_by_hand(compiled):
    inputs = WORKLOAD.make_inputs(1, "sac_default", noise_level=0.0)
    inputs.current_actions[0] = 0.0
    inputs.last_actions[0] = 0.0
    inputs.current_actions[0, :3] = (0.5, -0.25, 1.0)
    inputs.last_actions[0, :3] = (0.0, 0.25, 0.0)
    inputs.dof_pos[0] = 0.0
    inputs.dof_pos[0, 4] = 2.7  # 0.2 above the +2.5 limit
    inputs.dof_pos[0, 9] = -3.0  # 0.5 below the -2.5 limit
    action_rate = 0.25 + 0.25 + 1.0
    joint_limit = 0.2**2 + 0.5**2
    for out in (WORKLOAD.reference(inputs), _run_fused(inputs)):
        assert out.term_logs["reward/action_rate_l2"] == pytest.approx(-0.1 * action_rate, rel=1e-6)
        assert out.term_logs["reward/joint_limit"] == pytest.approx(-2.0 * joint_limit, rel=1e-5)


def test_yaw_aligned_tracking_is_exact(compiled):
    """Robot = motion turned by a yaw about the anchor and shifted in xy: body pose errors vanish."""
    inputs = WORKLOAD.make_inputs(3, "full_supported", noise_level=0.0)
    inputs.motion_body_quat[:, ANCHOR] = (1.0, 0.0, 0.0, 0.0)  # so the robot anchor's rotation is the yaw alone
    mp, mq = inputs.motion_body_pos.astype(np.float64), inputs.motion_body_quat.astype(np.float64)
    yaw = np.array([0.3, -2.0, 3.0])
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    v = mp - mp[:, ANCHOR : ANCHOR + 1]
    shift = np.array([0.4, -0.7, 0.0])
    rp = np.stack((c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1], v[..., 2]), -1)
    rp += mp[:, ANCHOR : ANCHOR + 1] + shift
    d = np.stack((np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)), -1)
    inputs.robot_body_pos[:] = rp
    inputs.robot_body_quat[:] = quat_mul(d[:, None], mq)
    inputs.robot_body_lin_vel[:] = inputs.motion_body_lin_vel
    inputs.robot_body_ang_vel[:] = inputs.motion_body_ang_vel
    for out in (WORKLOAD.reference(inputs), _run_fused(inputs)):
        logs = out.term_logs
        for term in ("motion_body_pos", "motion_body_ori", "motion_ee_body_pos_z", "motion_body_lin_vel"):
            scale = PROFILES["full_supported"].scales[TERMS.index(term)]
            assert logs[f"reward/{term}"] == pytest.approx(scale, abs=2e-3), term
        root_pos = math.exp(-float(shift @ shift) / 0.3**2)
        assert logs["reward/motion_global_root_pos"] == pytest.approx(root_pos, rel=1e-5)
        # the motion anchor seen from the robot anchor: -shift turned by -yaw; its orientation is Rz(-yaw)
        cy, sy = c[:, 0], s[:, 0]
        want_pos = np.stack((-(cy * 0.4 + sy * -0.7), -(-sy * 0.4 + cy * -0.7), 0 * yaw), -1)
        want_ori = np.stack((cy, sy, -sy, cy, 0 * yaw, 0 * yaw), -1)
        np.testing.assert_allclose(out.actor_obs[:, 58:61], want_pos, atol=1e-5)
        np.testing.assert_allclose(out.actor_obs[:, 61:67], want_ori, atol=1e-5)
        assert not out.terminated.any()
