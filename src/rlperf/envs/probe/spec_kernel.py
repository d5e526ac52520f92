"""COMPARISON KERNEL, not the suite's kernel: the env-overhead probe written from docs/workloads.md D alone.

Why it exists: the probe's reference kernel ran 3x faster per env than rlperf's on one thread (issue 9).
This is a stand-in for that reference, written only from spec D's formulas and decorator list
(`parallel=True, fastmath=True, boundscheck=False`, one `prange` over envs, float32 arithmetic, a
per-thread float64 log scratch `[get_thread_id(), 15]` zeroed per call), so rlperf's kernel can be
compared with it instruction for instruction (docs/kernel-profile.md). It is deliberately NOT what rlperf
ships: full fastmath drops NaN/inf safety (a NaN tilt never terminates) and the per-thread log scratch
makes log sums depend on the thread count. The one term spec D leaves to the reference source
(feet_phase_contrast) uses rlperf's definition, so both kernels compute the same 15 numbers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import get_thread_id, njit, prange

NUM_TERMS = 15


@njit(parallel=True, cache=True, fastmath=True, boundscheck=False)
def spec_probe_kernel(linvel, gyro, gravity, dof_pos, dof_vel, base_z, feet_pos, feet_quat, contacts,
                      commands, actions, last_actions, gait_phase, noise, default_angles, pose_weights,
                      reward, terminated, actor_obs, critic_obs, log_thread_sum):
    n = reward.shape[0]
    sigma = np.float32(0.25)
    feet_sigma = np.float32(0.008)
    swing = np.float32(0.09)
    cos_max_tilt = np.float32(math.cos(65.0 * math.pi / 180.0))
    two_pi = np.float32(2.0 * math.pi)
    pi = np.float32(math.pi)
    half = np.float32(0.5)
    one = np.float32(1.0)
    zero = np.float32(0.0)
    log_thread_sum[:] = 0.0
    for i in prange(n):
        tid = get_thread_id()
        ex = commands[i, 0] - linvel[i, 0]
        ey = commands[i, 1] - linvel[i, 1]
        r0 = math.exp(-(ex * ex + ey * ey) / sigma)
        ez = commands[i, 2] - gyro[i, 2]
        r1 = math.exp(-(ez * ez) / sigma)
        pose = zero
        rate = zero
        smooth = zero
        for j in range(29):
            q = dof_pos[i, j] - default_angles[j]
            pose += pose_weights[j] * q * q
            d = actions[i, j] - last_actions[i, j]
            rate += d * d
            smooth += actions[i, j] * actions[i, j]
        r2 = math.exp(-pose / (np.float32(10.0) * sigma))
        r3 = gyro[i, 0] * gyro[i, 0] + gyro[i, 1] * gyro[i, 1]
        r4 = gravity[i, 0] * gravity[i, 0] + gravity[i, 1] * gravity[i, 1]
        r5 = rate
        r6 = smooth
        r7 = (feet_quat[i, 0, 1] * feet_quat[i, 0, 1] + feet_quat[i, 0, 2] * feet_quat[i, 0, 2]
              + feet_quat[i, 1, 1] * feet_quat[i, 1, 1] + feet_quat[i, 1, 2] * feet_quat[i, 1, 2])
        dx = feet_pos[i, 0, 0] - feet_pos[i, 1, 0]
        dy = feet_pos[i, 0, 1] - feet_pos[i, 1, 1]
        dist = math.sqrt(dx * dx + dy * dy)
        r8 = (dist - np.float32(0.15)) ** 2 if dist < np.float32(0.15) else zero
        # swing height of both feet: x = fmod(phase + pi, 2 pi) / 2 pi, cubic Bezier up then down
        xl = np.fmod(gait_phase[i, 0] + pi, two_pi) / two_pi
        xr = np.fmod(gait_phase[i, 1] + pi, two_pi) / two_pi
        if xl <= half:
            t = np.float32(2.0) * xl
            hl = swing * (t * t * t + np.float32(3.0) * t * t * (one - t))
        else:
            t = np.float32(2.0) * xl - one
            hl = swing * (one - (t * t * t + np.float32(3.0) * t * t * (one - t)))
        if xr <= half:
            t = np.float32(2.0) * xr
            hr = swing * (t * t * t + np.float32(3.0) * t * t * (one - t))
        else:
            t = np.float32(2.0) * xr - one
            hr = swing * (one - (t * t * t + np.float32(3.0) * t * t * (one - t)))
        lz = feet_pos[i, 0, 2]
        rz = feet_pos[i, 1, 2]
        el = lz - hl
        er = rz - hr
        gate = one if max(linvel[i, 0], zero) >= zero else zero
        r9 = math.exp(-(el * el + er * er) / feet_sigma) * gate
        e = (lz - rz) - (hl - hr)
        r10 = math.exp(-(e * e) / feet_sigma)
        cl = (contacts[i, 0, 0] > half) | (contacts[i, 0, 1] > half) | (contacts[i, 0, 2] > half) \
            | (contacts[i, 0, 3] > half)
        cr = (contacts[i, 1, 0] > half) | (contacts[i, 1, 1] > half) | (contacts[i, 1, 2] > half) \
            | (contacts[i, 1, 3] > half)
        match = (one if cl == (hl <= swing * half) else zero) + (one if cr == (hr <= swing * half) else zero)
        r11 = half * match
        r12 = max(commands[i, 0], zero) if (cl and cr) else zero
        dz = base_z[i] - np.float32(0.754)
        r13 = dz * dz
        r14 = one
        w0 = np.float32(1.5) * r0
        w1 = np.float32(0.8) * r1
        w2 = np.float32(2.0) * r2
        w3 = np.float32(-1.0) * r3
        w4 = np.float32(-8.0) * r4
        w5 = np.float32(-2.5) * r5
        w6 = np.float32(-1.0) * r6
        w7 = np.float32(-3.0) * r7
        w8 = np.float32(-2.0) * r8
        w9 = np.float32(5.0) * r9
        w10 = np.float32(2.0) * r10
        w11 = np.float32(3.0) * r11
        w12 = np.float32(-1.5) * r12
        w13 = np.float32(-20.0) * r13
        w14 = np.float32(10.0) * r14
        reward[i] = (w0 + w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8 + w9 + w10 + w11 + w12 + w13 + w14) \
            * np.float32(0.02)
        log_thread_sum[tid, 0] += w0
        log_thread_sum[tid, 1] += w1
        log_thread_sum[tid, 2] += w2
        log_thread_sum[tid, 3] += w3
        log_thread_sum[tid, 4] += w4
        log_thread_sum[tid, 5] += w5
        log_thread_sum[tid, 6] += w6
        log_thread_sum[tid, 7] += w7
        log_thread_sum[tid, 8] += w8
        log_thread_sum[tid, 9] += w9
        log_thread_sum[tid, 10] += w10
        log_thread_sum[tid, 11] += w11
        log_thread_sum[tid, 12] += w12
        log_thread_sum[tid, 13] += w13
        log_thread_sum[tid, 14] += w14
        # tilt > 65 deg  <=>  gravity_z < cos(65 deg); the spec's other condition: base below 0.3
        terminated[i] = gravity[i, 2] < cos_max_tilt or base_z[i] < np.float32(0.3)
        for k in range(3):
            actor_obs[i, k] = (gyro[i, k] + noise[i, k]) * np.float32(0.25)
            actor_obs[i, 3 + k] = -(gravity[i, k] + noise[i, 3 + k])
            actor_obs[i, 93 + k] = commands[i, k]
            critic_obs[i, k] = gyro[i, k] * np.float32(0.25)
            critic_obs[i, 3 + k] = -gravity[i, k]
            critic_obs[i, 93 + k] = commands[i, k]
            critic_obs[i, 98 + k] = linvel[i, k] * np.float32(2.0)
        for j in range(29):
            q = dof_pos[i, j] - default_angles[j]
            actor_obs[i, 6 + j] = q + noise[i, 6 + j]
            actor_obs[i, 35 + j] = (dof_vel[i, j] + noise[i, 35 + j]) * np.float32(0.05)
            actor_obs[i, 64 + j] = actions[i, j]
            critic_obs[i, 6 + j] = q
            critic_obs[i, 35 + j] = dof_vel[i, j] * np.float32(0.05)
            critic_obs[i, 64 + j] = actions[i, j]
        actor_obs[i, 96] = gait_phase[i, 0]
        actor_obs[i, 97] = gait_phase[i, 1]
        critic_obs[i, 96] = gait_phase[i, 0]
        critic_obs[i, 97] = gait_phase[i, 1]


class SpecProbeRunner:
    """Preallocated outputs and float32 constants for one ProbeInputs; `()` runs one step (kernel, log
    reduction, then the 2% final-observation copy, as spec D times it)."""

    def __init__(self, inputs, max_threads: int):
        n = inputs.num_envs
        self.inputs = inputs
        self.default_angles = inputs.default_angles.astype(np.float32)
        self.pose_weights = inputs.pose_weights.astype(np.float32)
        self.reward = np.zeros(n, dtype=np.float32)
        self.terminated = np.zeros(n, dtype=np.bool_)
        self.actor = np.zeros((n, 98), dtype=np.float32)
        self.critic = np.zeros((n, 101), dtype=np.float32)
        self.log_thread_sum = np.zeros((max_threads, NUM_TERMS), dtype=np.float64)
        self.final_actor = np.zeros((inputs.num_done, 98), dtype=np.float32)
        self.final_critic = np.zeros((inputs.num_done, 101), dtype=np.float32)

    def __call__(self) -> np.ndarray:
        inp = self.inputs
        spec_probe_kernel(inp.linvel, inp.gyro, inp.gravity, inp.dof_pos, inp.dof_vel, inp.base_z, inp.feet_pos,
                          inp.feet_quat, inp.contacts, inp.commands, inp.actions, inp.last_actions,
                          inp.gait_phase, inp.noise, self.default_angles, self.pose_weights, self.reward,
                          self.terminated, self.actor, self.critic, self.log_thread_sum)
        means = self.log_thread_sum.sum(axis=0) / inp.num_envs
        self.final_actor[:] = self.actor[: inp.num_done]
        self.final_critic[:] = self.critic[: inp.num_done]
        return means
