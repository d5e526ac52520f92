"""Parity numbers and verdicts: env counts 1, 7, 513, 8192, threads 1 and 2, NaN and inf rows."""

import numpy as np
import pytest

from rlperf.envs import cases, parity
from rlperf.envs.base import EnvOutputs
from rlperf.envs.probe import WORKLOAD as PROBE
from rlperf.envs.walk import WORKLOAD as WALK
from rlperf.envs.walk.inputs import poison_rows

WORKLOADS = {"g1_walk_flat": (WALK, "sac_default"), "probe": (PROBE, "default")}


@pytest.fixture(scope="module", params=sorted(WORKLOADS))
def workload(request):
    w, profile = WORKLOADS[request.param]
    w.compile()
    return w, profile


@pytest.mark.parametrize("threads", cases.PARITY_THREADS)
@pytest.mark.parametrize("num_envs", cases.PARITY_ENVS)
def test_kernel_matches_numpy_within_tolerance(workload, num_envs, threads):
    w, profile = workload
    result = parity.check(w, profile, num_envs, threads)
    assert result.ok, result.failures
    assert result.termination_mismatch == 0


@pytest.mark.parametrize("threads", cases.PARITY_THREADS)
def test_nan_and_inf_rows_terminate_exactly_as_in_numpy(workload, threads):
    w, profile = workload
    inp = w.make_inputs(513, profile, noise_level=0.0)
    rows = [11, 100, 257, 258, 400, 512]
    poison_rows(inp, rows)
    result = parity.check(w, profile, 513, threads, inputs=inp)
    assert result.termination_mismatch == 0
    assert w.reference(inp).terminated[rows].all()
    assert result.ok, result.failures


def test_parity_runs_at_noise_level_zero(workload):
    w, profile = workload
    assert not w.make_inputs(8, profile, noise_level=0.0).noise.any()


def _outputs(n=6):
    return EnvOutputs(reward=np.linspace(0, 1, n, dtype=np.float32), terminated=np.zeros(n, bool),
                      actor_obs=np.ones((n, 3), np.float32), critic_obs=np.ones((n, 4), np.float32),
                      term_logs={"reward/alive": 10.0})


def test_a_perturbed_reward_and_flipped_termination_fail_with_numbers():
    ref, got = _outputs(), _outputs()
    got.reward[2] += 1e-3
    got.terminated[0] = True
    result = parity.compare(ref, got, WALK.tolerances)
    assert not result.ok
    assert result.termination_mismatch == 1
    assert result.max_abs_reward_diff == pytest.approx(1e-3, rel=1e-3)


def test_nan_matches_nan_but_not_a_number():
    assert parity.max_abs_diff(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) == 0.0
    assert parity.max_abs_diff(np.array([np.nan]), np.array([0.0])) == float("inf")
    assert parity.max_abs_diff(np.array([np.inf]), np.array([-np.inf])) == float("inf")


def test_missing_log_keys_fail_parity():
    ref, got = _outputs(), _outputs()
    got.term_logs = {}
    assert not parity.compare(ref, got, WALK.tolerances).ok
