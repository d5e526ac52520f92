"""The probe kernel with its observation noise drawn in-kernel (issue 9 section 3) instead of passed in.

The kernel is the default `fused.probe_update_state` body, recompiled with `write_obs_row` rebound to a
version that draws env i's 64 values from the counter-based generator (`stream_key(seed, step, i)`,
`uniform_at`) into the actor row before the usual row write: one source for the hot path, the same
chunking (so logs stay bitwise identical across thread counts), and draws independent of the threads.
The `noise` argument becomes the tuple (seed, step, per-column scales). Draws are U(-1, 1) (C9) scaled
by the probe's per-column NOISE_SIGMA x level, the same scaling the passed-in array gets in `inputs.py`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from rlperf.envs.noise import oracle
from rlperf.envs.noise.counter import stream_key, uniform_at
from rlperf.envs.noise.rebind import rebound
from rlperf.envs.probe import ProbeWorkload, fused
from rlperf.envs.probe.inputs import NOISE_SIGMA, ProbeInputs
from rlperf.envs.walk.reference import cos_max_tilt
from rlperf.envs.walk.rows import write_obs_row

NOISE_DIM = NOISE_SIGMA.shape[0]


@njit(inline="always", nogil=True)
def write_obs_row_drawn(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, noise,
                        default_angles, actor_obs, critic_obs):
    """Draw env i's noise into its actor row, then the usual row write reads it from there (in place)."""
    seed, step, scales = noise
    key = stream_key(seed, step, i)
    for k in range(scales.shape[0]):
        actor_obs[i, k] = uniform_at(key, k) * scales[k]
    write_obs_row(i, linvel, gyro, gravity, dof_pos, dof_vel, commands, actions, gait_phase, actor_obs,
                  default_angles, actor_obs, critic_obs)


probe_update_state_drawn = rebound(fused.probe_update_state, "probe_update_state_drawn",
                                   write_obs_row=write_obs_row_drawn)


@dataclasses.dataclass
class DrawnProbeInputs(ProbeInputs):
    """Probe inputs plus the generator key; `noise` holds the numpy oracle's draws for the reference."""

    noise_seed: int = 0
    step: int = 0
    noise_level: float = 1.0


def noise_scales(level: float = 1.0) -> np.ndarray:
    return (NOISE_SIGMA * level).astype(np.float32)


def oracle_noise(num_envs: int, seed: int, step: int, level: float = 1.0) -> np.ndarray:
    """The same draws as the kernel, by the numpy counter-based generator (bit-identical)."""
    return oracle.uniform(seed, step, num_envs, NOISE_DIM) * noise_scales(level)


def drawn(inp: ProbeInputs, seed: int, step: int, level: float = 1.0) -> DrawnProbeInputs:
    """`inp` keyed by (seed, step), its `noise` replaced by the oracle's draws of that key."""
    fields = {f.name: getattr(inp, f.name) for f in dataclasses.fields(ProbeInputs)}
    fields["noise"] = oracle_noise(inp.num_envs, seed, step, level)
    return DrawnProbeInputs(**fields, noise_seed=seed, step=step, noise_level=level)


def launch(inp: DrawnProbeInputs, nchunks: int, out) -> None:
    """As `fused.launch`, with (seed, step, scales) in place of the noise array."""
    key = (np.uint64(inp.noise_seed), np.uint64(inp.step), noise_scales(inp.noise_level))
    probe_update_state_drawn(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z,
                             inp.feet_pos, inp.feet_quat, inp.contacts, inp.commands, inp.actions,
                             inp.last_actions, inp.gait_phase, key, inp.default_angles.astype(np.float32),
                             inp.pose_weights.astype(np.float32), inp.scales, inp.params,
                             cos_max_tilt(inp.params), nchunks, inp.num_done, *out)


class DrawnNoiseProbe(ProbeWorkload):
    """The probe workload running this kernel; its inputs carry the key (step 0) and the oracle's draws."""

    _fused = "rlperf.envs.probe.fused_noise"
    kernel_name = "probe_update_state_drawn"

    def make_inputs(self, num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0,
                    step: int = 0) -> DrawnProbeInputs:
        return drawn(super().make_inputs(num_envs, profile, seed=seed), seed, step, noise_level)

    def numpy_draws(self, inp: DrawnProbeInputs) -> np.ndarray:
        """The kernel's draws for `inp`'s key, by the numpy oracle (the single-thread numpy arm)."""
        return oracle_noise(inp.num_envs, inp.noise_seed, inp.step, inp.noise_level)


WORKLOAD = DrawnNoiseProbe()
