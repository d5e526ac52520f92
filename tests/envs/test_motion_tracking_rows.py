"""The motion-tracking kernel's libm replacements (envs/motion_tracking/rows.py) against numpy, and the
termination fast path (`fused._sure`) at the thresholds, where only the strict helper may decide."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numba import njit

from rlperf.envs.motion_tracking import WORKLOAD
from rlperf.envs.motion_tracking.profiles import ANCHOR, PROFILES
from rlperf.envs.motion_tracking.rows import FASTMATH, acos01, half_yaw, ori_error


@njit(cache=False, fastmath=FASTMATH)  # the kernel's flags: the helpers are inlined into it
def _acos_all(d):
    out = np.empty_like(d)
    for i in range(d.size):
        out[i] = acos01(d[i])
    return out


@njit(cache=False, fastmath=FASTMATH)  # the kernel's flags: the helpers are inlined into it
def _ori_all(d):
    out = np.empty_like(d)
    for i in range(d.size):
        out[i] = ori_error(d[i])
    return out


@njit(cache=False, fastmath=FASTMATH)  # the kernel's flags: the helpers are inlined into it
def _half_yaw_all(y, x):
    c, s = np.empty_like(y), np.empty_like(y)
    for i in range(y.size):
        c[i], s[i] = half_yaw(y[i], x[i])
    return c, s


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.astype(np.float64) - b.astype(np.float64)) / np.spacing(np.abs(b)).astype(np.float64)


def test_acos01_is_within_3_ulp_of_numpy_on_a_dense_sweep():
    d = np.concatenate([np.linspace(0, 1, 2_000_001, dtype=np.float32),
                        np.nextafter(np.float32(1), np.float32(0)) - np.arange(4096, dtype=np.float32) * 6e-8])
    d = np.clip(d, 0, 1).astype(np.float32)
    got, want = _acos_all(d), np.arccos(d)
    assert got.dtype == np.float32
    ulps = _ulps(got[want > 0], want[want > 0])
    assert ulps.max() <= 3.0, (ulps.max(), d[want > 0][ulps.argmax()])
    assert got[d == 1].tolist() == [0.0] * int((d == 1).sum())


def test_ori_error_passes_nan_and_clips_like_numpy():
    d = np.array([np.nan, 1.5, -1.5, np.inf, -np.inf, -0.25, 0.0], np.float32)
    want = (2 * np.arccos(np.clip(np.abs(d), 0, 1))) ** 2
    got = _ori_all(d)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-6)


def test_half_yaw_is_the_half_angle_up_to_sign():
    rng = np.random.default_rng(0)
    ang = np.concatenate([rng.uniform(-np.pi, np.pi, 200_000), [0, np.pi, -np.pi, 1e-6, np.pi - 1e-6, -np.pi + 1e-6]])
    r = np.concatenate([rng.uniform(1e-3, 2.0, 200_000), np.ones(6)])
    y, x = (r * np.sin(ang)).astype(np.float32), (r * np.cos(ang)).astype(np.float32)
    half = np.arctan2(y.astype(np.float64), x.astype(np.float64)) / 2
    c, s = _half_yaw_all(y, x)
    sign = np.where(c * np.cos(half) + s * np.sin(half) < 0, -1.0, 1.0)
    np.testing.assert_allclose(sign * c, np.cos(half), atol=5e-7)
    np.testing.assert_allclose(sign * s, np.sin(half), atol=5e-7)
    norm = c.astype(np.float64) ** 2 + s.astype(np.float64) ** 2 - 1
    assert abs(norm.mean()) < 2e-9 and np.abs(norm).max() < 3e-7  # unbiased: float32 rounding only
    c0, s0 = _half_yaw_all(np.zeros(1, np.float32), np.zeros(1, np.float32))
    assert (c0[0], s0[0]) == (1.0, 0.0)
    cn, sn = _half_yaw_all(np.array([np.nan], np.float32), np.ones(1, np.float32))
    assert np.isnan(cn[0]) and np.isnan(sn[0])


@pytest.mark.parametrize("profile", ["sac_default", "contacts"])
def test_terminations_at_the_thresholds_match_numpy(profile):
    """Rows placed 0, +-1 and +-2 float32 steps around each threshold: the strict path must decide them."""
    prof = PROFILES["sac_default"]
    if profile == "contacts":
        prof = dataclasses.replace(prof, name="contacts", terminate_on_undesired_contacts=True)
    n = 64
    inputs = WORKLOAD.make_inputs(n, prof, noise_level=0.0)
    rp, mp = inputs.robot_body_pos, inputs.motion_body_pos
    rp[:, :, 2] = np.abs(rp[:, :, 2]) + 0.1
    mp[:, :, 2] = rp[:, :, 2]
    steps = np.arange(-2, 3)
    thr = np.float32(prof.ee_body_pos_z_threshold)
    for row, k in enumerate(steps):  # EE body 6 off by thr + k steps
        gap = thr + np.float32(k) * np.spacing(thr)
        rp[row, 6, 2] = mp[row, 6, 2] + gap
    thr_z = np.float32(prof.anchor_pos_z_threshold)
    for row, k in enumerate(steps, start=8):  # anchor z off by thr + k steps
        rp[row, ANCHOR, 2] = mp[row, ANCHOR, 2] - (thr_z + np.float32(k) * np.spacing(thr_z))
    rp[20, 0, 2] = np.float32(0.05)  # contact height exactly at CONTACT_Z: not below
    rp[21, 0, 2] = np.nextafter(np.float32(0.05), np.float32(0))
    ref = WORKLOAD.reference(inputs)
    got = WORKLOAD.fused_runner(inputs, 1)()
    np.testing.assert_array_equal(got.terminated, ref.terminated)
    assert ref.terminated[:5].any() and not ref.terminated[:5].all()
