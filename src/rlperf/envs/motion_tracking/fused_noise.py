"""g1_motion_tracking `update_state` with its actor noise drawn in-kernel (issue 9 section 3) instead of passed in.

The kernel is the default `fused.update_state_kernel` body recompiled with `_run_chunk` rebound to a
wrapper that, per chunk, draws the chunk's 64 values per env from the counter-based generator
(`stream_key(seed, step, i)`, `uniform_at`) into small chunk-local buffers, then runs the unchanged
`fused._run_chunk` on the chunk's rows (leading-axis slices: C-contiguous, so the default kernel's own
compiled specialisation runs, not a copy). Why this shape: the hot per-env body stays the one in fused.py
(optimisations there are measured in both variants, and fused.py is not edited), the chunking is the same
(logs bitwise identical across thread counts) and the draws depend on (seed, step, env, column) only.

The four noise arguments become (key, None, None, None) with key = (seed, step, per-column scales).
Columns follow the actor row (67..130): base linear velocity 3, gyro 3, joint positions 29, joint
velocities 29; each is U(-1, 1) (C9) times level x the profile's `noise_scales`, as in `inputs.py`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from rlperf.envs.motion_tracking import MotionTrackingWorkload, fused
from rlperf.envs.motion_tracking.inputs import MotionTrackingInputs
from rlperf.envs.motion_tracking.profiles import NUM_DOF, Profile, get_profile
from rlperf.envs.noise import oracle
from rlperf.envs.noise.counter import stream_key, uniform_at
from rlperf.envs.noise.rebind import rebound

WIDTHS = (3, 3, NUM_DOF, NUM_DOF)  # linvel, gyro, joint positions, joint velocities (actor columns 67..130)
NOISE_DIM = sum(WIDTHS)
_C_GYRO, _C_JP, _C_JV = 3, 6, 6 + NUM_DOF


@njit(nogil=True)
def _draw_chunk(seed, step, scales, lo, hi):
    """The (hi - lo)-row noise buffers of envs [lo, hi): value k of env i is uniform_at(key(i), k) * scales[k]."""
    m = hi - lo
    lin = np.empty((m, 3), dtype=np.float32)
    gyro = np.empty((m, 3), dtype=np.float32)
    jp = np.empty((m, NUM_DOF), dtype=np.float32)
    jv = np.empty((m, NUM_DOF), dtype=np.float32)
    for r in range(m):
        key = stream_key(seed, step, lo + r)
        for k in range(3):
            lin[r, k] = uniform_at(key, k) * scales[k]
            gyro[r, k] = uniform_at(key, _C_GYRO + k) * scales[_C_GYRO + k]
        for j in range(NUM_DOF):
            jp[r, j] = uniform_at(key, _C_JP + j) * scales[_C_JP + j]
            jv[r, j] = uniform_at(key, _C_JV + j) * scales[_C_JV + j]
    return lin, gyro, jp, jv


@njit(nogil=True)
def _run_chunk_drawn(
    c, lo, hi,
    mjp, mjv, mp, mq, mlv, mav, rp, rq, rlv, rav,
    linvel, gyro, dof_pos, dof_vel, cur_act, last_act,
    default_angles, joint_lo, joint_hi,
    key, n_gyro_slot, n_jp_slot, n_jv_slot,  # n_lin's slot holds the key; these three are never read
    scale, std, thresh, ctrl_dt,
    reward, terminated, actor, critic, logs,
):  # fmt: skip
    """`fused._run_chunk` for envs [lo, hi) with the noise drawn here. The rebound kernel calls it by position
    with `_run_chunk`'s arguments, so the signature is the same: `key` takes n_lin's place and the `*_slot`
    arguments (the passed-noise arrays' places) are never read."""
    seed, step, scales = key
    n_lin, n_gyro, n_jp, n_jv = _draw_chunk(seed, step, scales, lo, hi)
    fused._run_chunk(
        c, 0, hi - lo,
        mjp[lo:hi], mjv[lo:hi], mp[lo:hi], mq[lo:hi], mlv[lo:hi], mav[lo:hi],
        rp[lo:hi], rq[lo:hi], rlv[lo:hi], rav[lo:hi],
        linvel[lo:hi], gyro[lo:hi], dof_pos[lo:hi], dof_vel[lo:hi], cur_act[lo:hi], last_act[lo:hi],
        default_angles, joint_lo, joint_hi,
        n_lin, n_gyro, n_jp, n_jv,
        scale, std, thresh, ctrl_dt,
        reward[lo:hi], terminated[lo:hi], actor[lo:hi], critic[lo:hi], logs,
    )  # fmt: skip


update_state_kernel_drawn = rebound(fused.update_state_kernel, "update_state_kernel_drawn",
                                    _run_chunk=_run_chunk_drawn)


def noise_scales(profile: str | Profile, level: float = 1.0) -> np.ndarray:
    """(64,) float32 per-column scales: level x the profile's (linvel, gyro, joint angle, joint vel) scales."""
    per_field = get_profile(profile).noise_scales
    return np.repeat(np.asarray(per_field, dtype=np.float64) * level, WIDTHS).astype(np.float32)


def oracle_noise(num_envs: int, profile: str | Profile, seed: int, step: int, level: float = 1.0) -> np.ndarray:
    """(num_envs, 64) the kernel's draws, by the numpy counter-based generator (bit-identical)."""
    return oracle.uniform(seed, step, num_envs, NOISE_DIM) * noise_scales(profile, level)


@dataclasses.dataclass
class DrawnMotionTrackingInputs(MotionTrackingInputs):
    """Motion-tracking inputs plus the generator key; the noise arrays hold the oracle's draws of that key."""

    noise_seed: int = 0
    step: int = 0


def drawn(inp: MotionTrackingInputs, seed: int, step: int) -> DrawnMotionTrackingInputs:
    """`inp` keyed by (seed, step), its four noise arrays replaced by the oracle's draws (level inp.noise_level)."""
    fields = {f.name: getattr(inp, f.name) for f in dataclasses.fields(MotionTrackingInputs)}
    draws = oracle_noise(inp.num_envs, inp.profile, seed, step, inp.noise_level)
    edges = np.cumsum(WIDTHS)[:-1]
    names = ("noise_linvel", "noise_gyro", "noise_joint_pos", "noise_dof_vel")
    for name, part in zip(names, np.split(draws, edges, axis=1)):
        fields[name] = np.ascontiguousarray(part)
    return DrawnMotionTrackingInputs(**fields, noise_seed=seed, step=step)


def kernel_args(inp: DrawnMotionTrackingInputs) -> tuple:
    """`fused.kernel_args(inp)` with the four noise arrays (found by identity) replaced by (key, None x 3)."""
    args = list(fused.kernel_args(inp))
    noise = (inp.noise_linvel, inp.noise_gyro, inp.noise_joint_pos, inp.noise_dof_vel)
    at = next((k for k, a in enumerate(args) if a is noise[0]), None)
    if at is None or not all(a is b for a, b in zip(args[at:at + 4], noise)):
        raise RuntimeError("fused.kernel_args no longer passes the four noise arrays side by side")
    key = (np.uint64(inp.noise_seed), np.uint64(inp.step), noise_scales(inp.profile, inp.noise_level))
    args[at:at + 4] = [key, None, None, None]
    return tuple(args)


class DrawnNoiseMotionTracking(MotionTrackingWorkload):
    """The motion-tracking workload running this kernel; inputs carry the key (step 0) and the oracle's draws."""

    @property
    def kernel(self):
        return update_state_kernel_drawn

    def make_inputs(self, num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0,
                    step: int = 0) -> DrawnMotionTrackingInputs:
        return drawn(super().make_inputs(num_envs, profile, seed=seed, noise_level=noise_level), seed, step)

    def numpy_draws(self, inp: DrawnMotionTrackingInputs) -> np.ndarray:
        """The kernel's draws for `inp`'s key, by the numpy oracle (the single-thread numpy arm)."""
        return oracle_noise(inp.num_envs, inp.profile, inp.noise_seed, inp.step, inp.noise_level)

    def kernel_args(self, inputs: DrawnMotionTrackingInputs) -> tuple:
        """The drawn kernel's arguments: the noise key where fused.kernel_args passes the four noise arrays."""
        return kernel_args(inputs)


WORKLOAD = DrawnNoiseMotionTracking()
