"""Issue 9 rewrite: fast vs literal numpy references, the exact fmod fast path, the comparison kernel and
the memory-floor fields."""

import math

import numpy as np
import pytest

from rlperf.envs import copy_rate, parity
from rlperf.envs.probe import WORKLOAD as PROBE
from rlperf.envs.walk import WORKLOAD as WALK
from rlperf.envs.walk import reference
from rlperf.envs.walk.inputs import poison_rows


@pytest.mark.parametrize("workload, profile", [(PROBE, "default")] + [(WALK, p) for p in WALK.profiles])
@pytest.mark.parametrize("seed", [0, 3])
def test_fast_reference_matches_the_literal_one_nan_rows_included(workload, profile, seed):
    inp = workload.make_inputs(1031, profile, seed=seed, noise_level=1.0)
    poison_rows(inp, range(40, 52))
    result = parity.compare(workload.reference_literal(inp), workload.reference(inp), workload.tolerances)
    assert result.ok, result.failures
    assert result.termination_mismatch == 0


def test_the_fast_reference_changes_no_input():
    inp = WALK.make_inputs(257, "full_supported", seed=1)
    before = {k: v.copy() for k, v in vars(inp).items() if isinstance(v, np.ndarray)}
    reference.update_state(inp)
    assert all(np.array_equal(v, getattr(inp, k), equal_nan=True) for k, v in before.items())


def _wrap_all(values, out):
    from numba import njit

    from rlperf.envs.walk.rows import wrap_two_pi

    @njit
    def run(a, o):
        for i in range(a.shape[0]):
            o[i] = wrap_two_pi(a[i])

    run(values, out)


def test_wrap_two_pi_is_bitwise_fmod_on_and_off_its_fast_range():
    from rlperf.envs.walk.rows import TWO_PI32

    two_pi = float(TWO_PI32)
    edges = [0.0, -0.0, two_pi, np.nextafter(TWO_PI32, np.float32(0)), 2 * two_pi, 3 * two_pi, -1e-30,
             np.inf, -np.inf, np.nan, 1e30]
    values = np.concatenate([np.linspace(-20, 20, 20001), edges]).astype(np.float32)
    out = np.empty_like(values)
    _wrap_all(values, out)
    with np.errstate(invalid="ignore"):
        expected = np.fmod(values, TWO_PI32)
    assert np.array_equal(out.view(np.uint32)[~np.isnan(expected)], expected.view(np.uint32)[~np.isnan(expected)])
    assert np.array_equal(np.isnan(out), np.isnan(expected))


def test_cos_threshold_tilt_agrees_with_acos_on_a_dense_sweep():
    params = WALK.make_inputs(8, "sac_default").params
    gz = np.linspace(-1.5, 1.5, 300001)
    lit = np.arccos(np.clip(gz, -1, 1)) > params[reference.P["max_tilt_rad"]]
    assert np.array_equal(gz < reference.cos_max_tilt(params), lit)


def test_the_spec_comparison_kernel_computes_the_probe_on_finite_rows():
    """So instruction counts compare equal work: same reward, obs and terminations as the numpy probe."""
    from rlperf.envs.probe.spec_kernel import SpecProbeRunner

    inp = PROBE.make_inputs(777, "default", seed=2, noise_level=1.0)
    ref = PROBE.reference(inp)
    run = SpecProbeRunner(inp, 4)
    means = run()
    tol = PROBE.tolerances
    assert parity.within(ref.reward, run.reward, tol.reward_rtol, tol.reward_atol)
    assert np.array_equal(ref.terminated, run.terminated)
    assert parity.within(ref.actor_obs, run.actor, tol.obs_rtol, tol.obs_atol)
    assert parity.within(ref.critic_obs, run.critic, tol.obs_rtol, tol.obs_atol)
    assert parity.within(ref.extras["final_actor_obs"], run.final_actor, 0, 0)
    logs = np.array([ref.term_logs[f"reward/{name}"] for name in PROBE.terms])
    assert parity.within(logs, means, tol.log_rtol, tol.log_atol)


def test_floor_fields_quote_the_kernel_against_bytes_over_rate():
    ceiling = {"host_copy_Bps": 2e9, "host_copy_threads": 2, "buffer_bytes": 1, "samples_ms": [1.0]}
    got = copy_rate.floor_fields(1000, 4096, 4.096, ceiling)
    assert got["bytes_touched"] == 4_096_000
    assert math.isclose(got["memory_floor_ms"], 2.048) and math.isclose(got["x_memory_floor"], 2.0)
    assert got["host_copy"]["host_copy_threads"] == 2 and "samples_ms" not in got["host_copy"]
    assert copy_rate.floor_fields(None, 4096, 1.0, ceiling)["memory_floor_ms"] is None


def test_host_copy_rate_runs_at_the_requested_thread_count():
    got = copy_rate.host_copy_rate(1, nbytes=4 * 2**20, repeat=2)
    assert got["host_copy_threads"] == 1 and got["host_copy_Bps"] > 0 and len(got["samples_ms"]) == 2
