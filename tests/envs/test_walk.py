"""g1_walk_flat: synthetic inputs, numpy reference, and the fused kernel's contract."""

import numpy as np
import pytest

from rlperf.envs import parity
from rlperf.envs.walk import WORKLOAD as WALK
from rlperf.envs.walk import fused, inputs


@pytest.fixture(scope="module")
def compiled():
    WALK.compile()
    return WALK


def test_inputs_are_reproducible_for_a_seed_and_differ_across_seeds():
    a, b, c = (WALK.make_inputs(64, "sac_default", seed=s) for s in (3, 3, 4))
    assert np.array_equal(a.dof_pos, b.dof_pos) and np.array_equal(a.noise, b.noise)
    assert not np.array_equal(a.dof_pos, c.dof_pos)


def test_inputs_are_c_contiguous_float32_with_float64_shared_vectors():
    inp = WALK.make_inputs(32, "full_supported")
    for name in ("linvel", "gyro", "gravity", "dof_pos", "feet_pos", "contacts", "noise"):
        arr = getattr(inp, name)
        assert arr.dtype == np.float32 and arr.flags.c_contiguous, name
    for name in ("default_angles", "pose_weights", "scales", "params"):
        assert getattr(inp, name).dtype == np.float64


def test_two_percent_of_rows_terminate_in_the_reference():
    out = WALK.reference(WALK.make_inputs(1000, "sac_default"))
    assert out.terminated.sum() == 20 and out.terminated[:20].all()


def test_sac_profile_freezes_the_penalty_curriculum_at_one_half():
    scales = dict(zip(inputs.TERMS, inputs.PROFILES["sac_default"].scale_vector()))
    assert scales["penalty_feet_ori"] == -10.0 and scales["alive"] == 10.0 and scales["feet_phase"] == 5.0


def test_full_supported_activates_all_22_slots():
    assert len(inputs.TERMS) == 22
    assert np.count_nonzero(inputs.PROFILES["full_supported"].scale_vector()) == 22


def test_ppo_default_is_reward_and_termination_only():
    inp = WALK.make_inputs(16, "ppo_default")
    out = WALK.reference(inp)
    assert out.actor_obs.shape == (16, 0) and out.critic_obs.shape == (16, 0)
    assert WALK.scope("ppo_default").startswith("reward+termination")


def test_reference_logs_only_non_zero_scale_terms():
    out = WALK.reference(WALK.make_inputs(16, "sac_default"))
    assert set(out.term_logs) == {f"reward/{k}" for k in inputs.SAC_SCALES}


@pytest.mark.parametrize("profile", WALK.profiles)
def test_fused_kernel_matches_the_reference_for_every_profile(compiled, profile):
    result = parity.check(compiled, profile, 300, 2)
    assert result.ok, result.failures


def test_a_new_profile_reuses_the_one_compiled_specialisation(compiled):
    for profile in WALK.profiles:
        WALK.fused_runner(WALK.make_inputs(9, profile), 1)()
    assert len(fused.walk_update_state.signatures) == 1


def test_log_sums_are_bitwise_identical_at_one_and_two_threads(compiled):
    inp = WALK.make_inputs(777, "full_supported")
    one = dict(WALK.fused_runner(inp, 1)().term_logs)
    two = dict(WALK.fused_runner(inp, 2)().term_logs)
    assert one == two


def test_kernel_fastmath_keeps_nan_and_inf_semantics():
    assert not {"nnan", "ninf", "fast"} & set(fused.FASTMATH)
