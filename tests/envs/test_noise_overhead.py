"""envs.noise_overhead.numpy_path_over_in_kernel: the whole-step ratio on synthetic minima (no timing), which
has a value exactly where the draws-only ratio (a difference of two minima) has none."""

from __future__ import annotations

import math
import random

import pytest

from rlperf.envs.noise_overhead import ARMS, numpy_path_over_in_kernel


def _minima(passed: float, in_kernel: float, numpy: float) -> dict:
    return {"kernel-noise-passed": passed, "kernel-in-kernel-noise": in_kernel, "numpy-draws": numpy}


def test_it_is_the_numpy_path_step_over_the_in_kernel_step():
    # numpy draws 40 ms, then the kernel takes them in for 2 ms; drawing in-kernel the step is 2.1 ms
    assert numpy_path_over_in_kernel(_minima(2.0, 2.1, 40.0)) == pytest.approx(42.0 / 2.1)
    # numpy's draws as cheap as the kernel's increment: no faster either way
    assert numpy_path_over_in_kernel(_minima(3.0, 4.0, 1.0)) == pytest.approx(1.0)
    # slower in-kernel than numpy plus the passed kernel: below 1 (a fall the gate flags, @higher_is_better)
    assert numpy_path_over_in_kernel(_minima(1.0, 3.0, 1.0)) == pytest.approx(2 / 3)


def test_it_has_a_value_where_in_kernel_is_no_slower_than_passed():
    """The case where the draws-only ratio divides by <= 0 and is None (a skip in asv)."""
    for in_kernel in (2.0, 1.9, 0.5):
        value = numpy_path_over_in_kernel(_minima(2.0, in_kernel, 40.0))
        assert math.isfinite(value) and value == pytest.approx(42.0 / in_kernel)


def test_it_is_finite_and_positive_for_any_positive_minima():
    rng = random.Random(0)
    for _ in range(2000):
        minima = _minima(*(10 ** rng.uniform(-4, 4) for _ in ARMS))
        value = numpy_path_over_in_kernel(minima)
        assert value is not None and math.isfinite(value) and value > 0, minima


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_minimum_that_is_not_finite_and_positive_is_refused_naming_the_arms(bad):
    with pytest.raises(ValueError, match="kernel-in-kernel-noise") as exc:
        numpy_path_over_in_kernel(_minima(2.0, bad, 40.0))
    assert all(arm in str(exc.value) for arm in ARMS)
    with pytest.raises(KeyError):
        numpy_path_over_in_kernel({"kernel-noise-passed": 1.0, "numpy-draws": 1.0})
