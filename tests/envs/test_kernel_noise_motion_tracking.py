"""g1_motion_tracking with in-kernel counter-based noise: numpy oracle parity, thread-count independence."""

import numpy as np
import pytest

from rlperf.envs import parity
from rlperf.envs.motion_tracking import WORKLOAD as MT
from rlperf.envs.motion_tracking.fused_noise import WORKLOAD as DRAWN
from rlperf.envs.motion_tracking.fused_noise import noise_scales, oracle_noise
from rlperf.envs.motion_tracking.profiles import PROFILES

N = 257
FIELDS = ("reward", "terminated", "actor_obs", "critic_obs")


def _outputs(workload, inp, threads):
    """Run and copy: the motion-tracking runners write into the inputs' own output buffers."""
    out = workload.fused_runner(inp, threads)()
    return {k: getattr(out, k).copy() for k in FIELDS} | {"term_logs": dict(out.term_logs)}


def test_oracle_noise_is_uniform_scaled_by_the_profile_noise_scales():
    draws = oracle_noise(20000, "sac_default", 1, 2)
    assert draws.dtype == np.float32 and draws.shape == (20000, 64)
    lin, gyro, jp, jv = PROFILES["sac_default"].noise_scales
    assert np.array_equal(noise_scales("sac_default"), np.float32([lin] * 3 + [gyro] * 3 + [jp] * 29 + [jv] * 29))
    assert np.all(np.abs(draws) < noise_scales("sac_default"))
    assert abs(draws[:, 35:].std() - jv / np.sqrt(3)) < 0.02
    assert not np.any(oracle_noise(8, "sac_default", 1, 2, level=0.0))


def test_inputs_carry_the_oracle_draws_in_the_four_noise_fields():
    inp = DRAWN.make_inputs(9, "ppo_default", seed=4, step=5, noise_level=0.5)
    parts = (inp.noise_linvel, inp.noise_gyro, inp.noise_joint_pos, inp.noise_dof_vel)
    joined = np.concatenate(parts, axis=1)
    assert np.array_equal(joined, oracle_noise(9, "ppo_default", 4, 5, 0.5))
    assert all(a.flags.c_contiguous for a in parts)  # the types of the passed-in arrays: one specialisation


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("num_envs", [1, 7, N])
def test_in_kernel_noise_matches_the_numpy_reference_fed_the_same_draws(profile, num_envs):
    inp = DRAWN.make_inputs(num_envs, profile, seed=3, step=7)
    ref = MT.reference(inp)
    got = DRAWN.fused_runner(inp, 2)()
    result = parity.compare(ref, got, MT.tolerances)
    assert result.ok, result.failures
    assert np.any(got.actor_obs[:, 67:131] != got.critic_obs[:, 67:131])  # noise did reach the obs


def test_in_kernel_noise_is_bitwise_the_passed_in_kernel_fed_the_oracle_draws():
    inp = DRAWN.make_inputs(N, "full_supported", seed=3, step=7)
    drawn, passed = _outputs(DRAWN, inp, 2), _outputs(MT, inp, 2)  # MT reads inp's noise arrays
    for k in FIELDS:
        assert np.array_equal(drawn[k], passed[k]), k
    assert drawn["term_logs"] == passed["term_logs"]


def test_in_kernel_noise_outputs_are_identical_for_one_and_two_threads():
    inp = DRAWN.make_inputs(4099, "full_supported", seed=3, step=7)
    one, two = _outputs(DRAWN, inp, 1), _outputs(DRAWN, inp, 2)
    for k in FIELDS:
        assert np.array_equal(one[k], two[k]), k
    assert one["term_logs"] == two["term_logs"]


def test_draws_are_determined_by_the_seed_and_step():
    first = _outputs(DRAWN, DRAWN.make_inputs(N, "sac_default", seed=3, step=7), 1)
    again = _outputs(DRAWN, DRAWN.make_inputs(N, "sac_default", seed=3, step=7), 2)
    other = _outputs(DRAWN, DRAWN.make_inputs(N, "sac_default", seed=3, step=8), 1)
    assert np.array_equal(first["actor_obs"], again["actor_obs"])
    assert not np.array_equal(first["actor_obs"], other["actor_obs"])
    assert np.array_equal(first["critic_obs"], other["critic_obs"])  # the critic sees no noise


def test_one_specialisation():
    DRAWN.compile()
    assert len(DRAWN.kernel.signatures) == 1
