"""Counter-based noise: oracle bit-parity, statistics (that a biased generator fails), determinism,
identical draws for 1 and 2 threads, the per-env device API inside a user kernel, and the variants."""

import numba
import numpy as np
import pytest
from scipy import stats

from rlperf.envs.noise import cases, counter, oracle, variants
from rlperf.envs.threads import max_numba_threads

SEED, STEP, N, W = 7, 3, 1024, 64  # 65,536 draws per statistical check


def _fill(kind, seed=SEED, step=STEP, n=N, width=W, threads=1, scales=None):
    out = np.zeros((n, width), dtype=np.float32)
    scales = np.ones(width, np.float32) if scales is None else scales
    numba.set_num_threads(threads)
    (counter.fill_uniform if kind == "uniform" else counter.fill_normal)(np.uint64(seed), np.uint64(step),
                                                                          scales, out)
    return out


def looks_like(kind: str, x: np.ndarray) -> bool:
    """Mean and variance within 5 standard errors and a KS test at p > 1e-3 for U(-1, 1) or N(0, 1)."""
    x = x.astype(np.float64).ravel()
    mean, var = (0.0, 1.0 / 3.0) if kind == "uniform" else (0.0, 1.0)
    fourth = 1.0 / 5.0 if kind == "uniform" else 3.0  # E[x^4], for the variance's standard error
    se_mean = np.sqrt(var / x.size)
    se_var = np.sqrt((fourth - var * var) / x.size)
    dist = stats.uniform(-1.0, 2.0) if kind == "uniform" else stats.norm()
    return (abs(x.mean() - mean) < 5 * se_mean and abs(x.var() - var) < 5 * se_var
            and stats.kstest(x, dist.cdf).pvalue > 1e-3)


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_draws_pass_mean_variance_and_ks_and_biased_draws_fail(kind):
    x = _fill(kind)
    assert looks_like(kind, x)
    assert not looks_like(kind, x + np.float32(0.02))  # a shifted generator
    assert not looks_like(kind, x * np.float32(1.03))  # a generator with the wrong spread
    # a generator that drops the low bits of its draw: the classic truncation bug
    coarse = np.round(x * 8) / 8
    assert not looks_like(kind, coarse)


def test_uniforms_are_bit_identical_to_the_numpy_oracle():
    np.testing.assert_array_equal(_fill("uniform"), oracle.uniform(SEED, STEP, N, W))


def test_gaussians_match_the_numpy_oracle_to_a_few_ulp():
    got, ref = _fill("normal"), oracle.normal(SEED, STEP, N, W)
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6)


def test_uniforms_are_symmetric_odd_multiples_of_2_pow_minus_24_inside_minus_one_one():
    x = oracle.uniform(SEED, STEP, N, W).astype(np.float64) * 2 ** 24
    assert np.all(np.abs(x) < 2 ** 24)
    assert np.all(np.mod(x, 2) == 1)


def test_the_same_key_gives_the_same_draws_and_any_other_key_different_ones():
    a = _fill("uniform")
    np.testing.assert_array_equal(a, _fill("uniform"))
    for other in (_fill("uniform", seed=SEED + 1), _fill("uniform", step=STEP + 1)):
        assert np.mean(a == other) < 1e-3
    assert np.mean(a[:-1] == a[1:]) < 1e-3  # neighbouring envs are independent streams
    assert np.mean(a[:, :-1] == a[:, 1:]) < 1e-3  # and so are neighbouring columns


@pytest.mark.skipif(max_numba_threads() < 2, reason="needs 2 Numba threads")
@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_draws_are_identical_for_one_and_two_threads(kind):
    np.testing.assert_array_equal(_fill(kind, n=4099, threads=1), _fill(kind, n=4099, threads=2))


@numba.njit
def _user_kernel(seed, step, out_u, out_n):
    """How an update_state kernel uses the per-env API (hoisted key, and the one-call form)."""
    for env in range(out_u.shape[0]):
        key = counter.stream_key(seed, step, env)
        for k in range(out_u.shape[1]):
            out_u[env, k] = counter.uniform_at(key, k)
            out_n[env, k] = counter.normal_f32(seed, step, env, k)


def test_the_per_env_device_functions_inline_into_a_user_kernel():
    u = np.zeros((33, 64), np.float32)
    z = np.zeros((33, 64), np.float32)
    _user_kernel(np.uint64(SEED), np.uint64(STEP), u, z)
    np.testing.assert_array_equal(u, oracle.uniform(SEED, STEP, 33, 64))
    np.testing.assert_allclose(z, oracle.normal(SEED, STEP, 33, 64), rtol=2e-6, atol=2e-6)
    assert counter.uniform_f32(np.uint64(SEED), np.uint64(STEP), np.uint64(5), 9) == u[5, 9]


@pytest.mark.parametrize("variant", cases.VARIANTS)
@pytest.mark.parametrize("kind", cases.DISTS)
def test_every_variant_draws_scaled_values_from_its_distribution(variant, kind):
    profile = cases.PROFILES["g1_motion_tracking"]
    scales = profile.scales()
    filler = variants.make(variant, kind, 2048, scales, threads=2, seed=SEED)
    try:
        filler.fill()
        first = filler.out.copy()
        filler.fill()
    finally:
        filler.close()
    assert first.shape == (2048, profile.width) and first.dtype == np.float32
    assert not np.array_equal(first, filler.out)  # every call draws the next step
    dof_vel = slice(35, 64)  # scale 1.5: undo it and test the distribution
    assert looks_like(kind, first[:, dof_vel] / np.float32(1.5))


def test_numpy_threads_is_deterministic_for_a_thread_count_and_differs_across_counts():
    def draw(threads):
        f = variants.make("numpy-threads", "uniform", 1000, np.ones(8, np.float32), threads=threads, seed=1)
        try:
            f.fill()
            return f.out.copy()
        finally:
            f.close()

    np.testing.assert_array_equal(draw(2), draw(2))
    assert not np.array_equal(draw(1), draw(2))


def test_unknown_variant_and_distribution_are_rejected_with_the_choices():
    with pytest.raises(ValueError, match="numpy-threads"):
        variants.make("bogus", "uniform", 8, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="normal"):
        variants.make("numpy", "cauchy", 8, np.ones(4, np.float32))


def test_profiles_have_64_columns_with_the_spec_scales():
    assert all(p.width == 64 for p in cases.PROFILES.values())
    walk = cases.PROFILES["g1_walk_flat"].scales()
    assert walk[:6].tolist() == [0.0] * 6 and walk[6] == np.float32(0.01) and walk[63] == np.float32(0.1)
