"""The 15-term env-overhead probe: inputs, reference, fused float32 kernel, final-obs copy."""

import numpy as np
import pytest

from rlperf.envs import parity
from rlperf.envs.probe import WORKLOAD as PROBE
from rlperf.envs.probe import fused, inputs


@pytest.fixture(scope="module")
def compiled():
    PROBE.compile()
    return PROBE


def test_probe_has_fifteen_terms_with_the_spec_scales():
    assert len(inputs.TERMS) == 15
    assert inputs.SCALES["alive"] == 10 and inputs.SCALES["penalty_orientation"] == -8


def test_pose_weights_are_two_at_indices_one_and_seven():
    w = inputs.pose_weights()
    assert w[1] == w[7] == 2.0 and w[0] == 0.01


def test_noise_is_pregenerated_gaussian_scaled_by_level():
    n = PROBE.make_inputs(4096, "default", noise_level=1.0).noise
    assert abs(n[:, 35:].std() - 1.5) < 0.05 and abs(n[:, :3].std() - 0.2) < 0.01
    assert not PROBE.make_inputs(64, "default", noise_level=0.0).noise.any()


def test_final_observation_copy_covers_the_first_two_percent_of_rows(compiled):
    inp = PROBE.make_inputs(1000, "default")
    out = PROBE.fused_runner(inp, 2)()
    assert inp.num_done == 20
    assert np.array_equal(out.extras["final_actor_obs"], out.actor_obs[:20])
    assert np.array_equal(out.extras["final_critic_obs"], out.critic_obs[:20])


def test_fused_probe_matches_the_numpy_probe(compiled):
    result = parity.check(compiled, "default", 2048, 2)
    assert result.ok, result.failures
    assert set(result.extra_diffs) == {"final_actor_obs", "final_critic_obs"}


def test_probe_kernel_has_one_specialisation_after_use(compiled):
    PROBE.fused_runner(PROBE.make_inputs(5, "default", noise_level=0.0), 1)()
    assert len(fused.probe_update_state.signatures) == 1


def test_unknown_probe_profile_is_rejected():
    with pytest.raises(ValueError, match="default"):
        PROBE.make_inputs(8, "sac_default")
