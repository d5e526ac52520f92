"""The end-to-end collector: G1 physics (MuJoCo or recorded states) -> update_state -> CPU policy -> replay.

One `Collector.step()` is one control step for all envs, timed per phase (C1 order): policy inference,
physics (decimated substeps with position targets), state snapshot (state_read), noise draws (noise) and
kernel inputs (inputs), update_state (fused kernel
or numpy reference), episode bookkeeping, reset_done (row-wise or full-batch getter-then-slice), and the
replay write with the terminal patch. state_read, noise and inputs were once inside `other`; on the H200
host they outgrew update_state (21.7 ms of `other` against 2.0 ms of fused update_state at 8,192 envs).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from rlperf.e2e.collector.budget import ThreadBudget
from rlperf.e2e.collector.config import task_config
from rlperf.e2e.collector.kernels import KERNELS, KernelRunner, first_use
from rlperf.e2e.collector.recorded import RecordedBatch, TransitionLog, record
from rlperf.e2e.collector.state import StateReader
from rlperf.e2e.collector.timings import StepTimer
from rlperf.e2e.progress import stage
from rlperf.errors import choice_error

PHYSICS = ("mujoco", "recorded")
RESET_PATHS = ("rows", "full")
STEPPERS = ("auto", "rollout", "pool")
PREFILL_LABEL = "prefill: recorded states"

__all__ = ["Collector", "ThreadBudget", "TransitionLog", "PHYSICS", "KERNELS", "RESET_PATHS", "STEPPERS",
           "PREFILL_LABEL"]


class Collector:
    """N G1 envs of `workload.task` stepped for the SAC collector; see the module docstring for one step."""

    def __init__(self, workload, *, physics: str = "mujoco", kernel: str = "fused",
                 threads: ThreadBudget, seed: int = 0, replay_writer=None, policy=None, reset_path: str = "rows",
                 stepper: str = "auto", overrides: tuple[str, ...] = (), recording=None):
        for what, value, valid in (("physics", physics, PHYSICS), ("kernel", kernel, KERNELS),
                                   ("reset path", reset_path, RESET_PATHS), ("stepper", stepper, STEPPERS)):
            if value not in valid:
                raise choice_error(what, value, valid)
        num_envs = workload.num_envs  # one source: a caller wanting another count passes workload.with_envs(n)
        from rlperf.envs.threads import prepare_numba

        if isinstance(threads, int):  # a core count (the e2e loop's --threads): the default split of it
            threads = ThreadBudget.split(threads)
        numba_info = prepare_numba()  # before any parallel launch: the threading layer is chosen here
        self.workload, self.cfg = workload, task_config(workload, overrides)
        self.task, self.physics, self.kernel, self.reset_path = workload.task, physics, kernel, reset_path
        self.num_envs, self.seed, self.threads = num_envs, seed, threads
        self.obs_dim, self.critic_dim, self.action_dim = workload.obs_dim, workload.critic_dim, workload.action_dim
        self.replay_writer = replay_writer
        self._overrides = tuple(overrides)
        self._given_policy = policy  # the recording run (recorded physics, prefill) acts with it too
        self.rng = np.random.default_rng(seed)
        self.meta: dict = {"task": self.task, "sim": workload.sim, "physics": physics, "kernel": kernel,
                           "reset_path": reset_path, "num_envs": num_envs, "seed": seed, "numba": numba_info}
        self.sim = self._make_physics(physics, stepper, recording, overrides)
        self.meta["substeps"] = self.sim.substeps
        self.meta["control"] = ("position targets: ctrl = action * action_scale + keyframe ctrl, held for the "
                                "substeps; the model's position servos (kp per joint class, joint damping) "
                                "apply the PD law, kp/kd are not randomised per env in these configs")
        self.meta["action_scale"] = self.cfg.action_scale
        self.meta["timestep"] = float(self.sim.model.opt.timestep)
        self._task = self._make_task()
        self.meta.update(self._task.meta())
        self.reader = StateReader(self.sim.sensors)
        # the default actor acts by its mean (seeded rollouts reproduce); a learner's actor samples (SAC explores)
        self.deterministic = policy is None
        self.policy = policy if policy is not None else self._default_policy()
        self.policy.eval()
        self._init_envs()
        self.meta["threads"] = self.threads.apply()  # again: the walk runner re-splits torch threads
        import numba

        self.meta["numba_threading_layer"] = numba.threading_layer()

    # ---- construction ------------------------------------------------------------------------------
    def _make_physics(self, physics: str, stepper: str, recording, overrides):
        from rlperf.e2e.collector.physics import MujocoBatch

        if physics == "recorded":
            if recording is None:
                from rlperf.e2e.collector.recorded import RECORD_ENVS, RECORD_STEPS

                with stage(f"recording {min(self.num_envs, RECORD_ENVS)} envs x {RECORD_STEPS} steps of MuJoCo "
                           f"physics to replay"):
                    recording = self._record(overrides)
            self.recording = recording
            self.meta["recording"] = recording.meta
            self.meta["stepper"] = {"used": "recorded", "why": "physics='recorded' replays states, steps none"}
            like = MujocoBatch(1, ctrl_dt=self.cfg.ctrl_dt, threads=1)
            return RecordedBatch(recording, self.num_envs, like)
        self.recording = None
        with stage(f"loading the G1 MuJoCo model for {self.num_envs:,} envs"):
            sim = MujocoBatch(self.num_envs, ctrl_dt=self.cfg.ctrl_dt, threads=self.threads.physics_threads,
                              stepper="rollout" if stepper == "auto" else stepper)
        if stepper == "auto":
            with stage("timing the two MuJoCo steppers (rollout, MjData pool) to pick the faster"):
                choice = sim.measure_steppers(np.tile(sim.key_ctrl, (self.num_envs, 1)), repeats=3)
            sim.stepper = choice["fastest"]
            self.meta["stepper"] = {"used": sim.stepper, **choice,
                                    "why": "fastest of rollout and the MjData pool, measured at construction",
                                    **sim.cost_record(choice["ms_per_control_step"][sim.stepper])}
        else:
            self.meta["stepper"] = {"used": sim.stepper, "why": "requested (not measured)"}
        return sim

    def _record(self, overrides):
        from rlperf.e2e.collector.recorded import RECORD_ENVS

        recorder = Collector(self.workload.with_envs(min(self.num_envs, RECORD_ENVS)), physics="mujoco",
                             kernel=self.kernel, threads=self.threads, seed=self.seed,
                             replay_writer=TransitionLog(), policy=self._given_policy, overrides=overrides,
                             stepper="rollout")  # both steppers give identical states (tested)
        try:
            return record(recorder)
        finally:
            recorder.close()

    def _make_task(self):
        sim = self.sim
        if self.task == "g1_walk_flat":
            from rlperf.e2e.collector.walk_task import WalkTask

            return WalkTask(self.cfg, self.num_envs, sim.key_qpos, sim.key_ctrl)
        from rlperf.e2e.collector.motion import synthesise
        from rlperf.e2e.collector.tracking_task import TrackingTask

        motion = synthesise(sim.model, sim.key_qpos, seed=self.seed)
        return TrackingTask(self.cfg, self.num_envs, motion, np.array(sim.model.jnt_range[1:]), sim.key_ctrl)

    def _default_policy(self):
        from rlperf.e2e.collector.policy import default_actor

        self.meta["policy"] = "default learner Actor 512-256-128, mean action (no policy handed over)"
        return default_actor(self.obs_dim, self.action_dim, seed=self.seed)

    def _init_envs(self) -> None:
        """Reset every env with the task's randomisation, stagger episode steps (C1), compute first obs."""
        n = self.num_envs
        rows = np.arange(n)
        self.sim.write_rows(rows, *self._task.reset(rows, self.rng))
        self.sim.forward()
        self.steps = self.rng.integers(0, self._task.episode_steps, n)
        snap = self.reader.read(self.sim.qpos, self.sim.qvel, self.sim.sensordata)
        self._inputs = self._task.make_inputs(snap, None, self._task.draw_noise(self.rng, n))
        self.threads.apply()
        announce = (stage(f"compiling the fused {self.task} update_state kernel with Numba",
                          "tens of seconds on 2 cores with a cold cache, about a second from a warm one")
                    if first_use(self.task, self.kernel) else contextlib.nullcontext())
        with announce:  # the first run of the fused kernel in this process compiles it
            self._runner = KernelRunner(self.task, self._inputs, self.kernel, self.threads.numba_threads)
            out = self._runner()
        self.obs = np.ascontiguousarray(out.actor_obs, np.float32).copy()
        self.critic = np.ascontiguousarray(out.critic_obs, np.float32).copy()
        self._final_obs = np.zeros_like(self.obs)
        self._final_critic = np.zeros_like(self.critic)
        self._scratch = None  # full-batch reset path: its own inputs and runner, built on first use
        self.last_reset_rows = np.zeros(0, np.int64)
        self.last_outputs: dict[str, np.ndarray] = {}
        self.ctrl_scale = self.cfg.action_scale

    # ---- one control step ----------------------------------------------------------------------------
    def step(self) -> dict[str, float]:
        """One control step for all envs; ms per phase plus `other` and `total`."""
        import torch

        timer = StepTimer()
        obs, critic = self.obs, self.critic
        with timer.phase("policy"):
            with torch.inference_mode():
                actions = self.policy.act(torch.from_numpy(obs), deterministic=self.deterministic).numpy()
            actions = np.clip(actions, -1.0, 1.0).astype(np.float32, copy=False)
        task = self._task
        task.apply_action(actions)
        ctrl = actions.astype(np.float64) * self.ctrl_scale + self.sim.key_ctrl  # position targets (PD servos)
        with timer.phase("physics"):
            self.sim.step(ctrl)
        with timer.phase("state_read"):
            snap = self.reader.read(self.sim.qpos, self.sim.qvel, self.sim.sensordata)
        with timer.phase("noise"):  # numpy draws on one thread: the ceiling of docs/workloads.md C9
            noise = task.draw_noise(self.rng, self.num_envs)
        with timer.phase("inputs"):
            task.refill(self._inputs, snap, noise)
        with timer.phase("update_state"):
            out = self._runner()
        next_obs = np.array(out.actor_obs, np.float32)
        next_critic = np.array(out.critic_obs, np.float32)
        reward = np.nan_to_num(np.array(out.reward, np.float32))
        terminated = np.array(out.terminated, bool)
        self.steps += 1
        truncated = (self.steps >= task.episode_steps) | task.after_update(snap, terminated)
        done = terminated | truncated
        with timer.phase("reset_done"):
            self._reset_done(np.flatnonzero(done), next_obs, next_critic)
        with timer.phase("replay_add"):
            if self.replay_writer is not None:
                self._write(obs, critic, actions, reward, terminated, truncated, next_obs, next_critic, done)
        self.obs, self.critic = next_obs, next_critic
        self.last_outputs = {"reward": reward, "terminated": terminated, "truncated": truncated,
                             "actions": actions}
        return timer.result()

    def _write(self, obs, critic, actions, reward, terminated, truncated, next_obs, next_critic, done) -> None:
        import torch

        t = torch.from_numpy
        self.replay_writer.add(
            obs=t(obs), next_obs=t(next_obs), actions=t(actions), reward=t(reward),
            done=t(terminated.astype(np.float32)), truncated=t(truncated.astype(np.float32)), critic=t(critic),
            next_critic=t(next_critic), terminal_mask=t(done), final_obs=t(self._final_obs),
            final_critic=t(self._final_critic))

    # ---- reset_done ----------------------------------------------------------------------------------
    def _reset_done(self, rows: np.ndarray, next_obs: np.ndarray, next_critic: np.ndarray) -> None:
        """C1 reset-done: copy terminal obs, reset the rows to the keyframe with randomisation, recompute obs."""
        self.last_reset_rows = rows
        if rows.size == 0:
            return
        self.steps[rows] = 0
        self._final_obs[rows] = next_obs[rows]
        self._final_critic[rows] = next_critic[rows]
        self.sim.write_rows(rows, *self._task.reset(rows, self.rng))
        noise = self._task.draw_noise(self.rng, rows.size)  # same draws on both paths: same reset obs
        if self.reset_path == "rows":
            self.sim.forward(rows)
            snap = self.reader.read(self.sim.qpos[rows], self.sim.qvel[rows], self.sim.sensordata[rows])
            out = KernelRunner(self.task, self._task.make_inputs(snap, rows, noise), self.kernel,
                               self.threads.numba_threads)()
            next_obs[rows], next_critic[rows] = out.actor_obs, out.critic_obs
        else:
            self.sim.forward()
            snap = self.reader.read(self.sim.qpos, self.sim.qvel, self.sim.sensordata)
            noise = _scatter(noise, rows, self.num_envs)
            if self._scratch is None:
                inputs = self._task.make_inputs(snap, None, noise)
                self._scratch = KernelRunner(self.task, inputs, self.kernel, self.threads.numba_threads)
            else:
                self._task.refill(self._scratch.inputs, snap, noise)
            out = self._scratch()
            next_obs[rows], next_critic[rows] = out.actor_obs[rows], out.critic_obs[rows]
        if self.kernel == "fused":
            self.threads.restore_torch()  # the walk runner hands torch the cores Numba does not use

    # ---- learner-facing --------------------------------------------------------------------------------
    def set_policy_weights(self, state_dict) -> float:
        """Sync the CPU actor copy from the learner's weights (CUDA tensors are copied to the CPU);
        returns ms (the sync cost, the D2H included)."""
        t0 = time.perf_counter()
        self.policy.load_state_dict({k: v.detach().to("cpu") for k, v in state_dict.items()})
        return (time.perf_counter() - t0) * 1e3

    def prefill(self, writer, rows: int) -> dict:
        """Write `rows` rows of recorded transitions through `writer.add`, one num_envs chunk per add."""
        if not isinstance(rows, int) or rows < 0:
            raise ValueError(f"prefill rows must be a non-negative integer, got {rows!r}")
        import torch

        if self.recording is None:
            self.recording = self._record(self._overrides)
        rec = self.recording.transitions
        steps, envs = next(iter(rec.values())).shape[:2]
        t0 = time.perf_counter()
        written = adds = 0
        while written < rows:
            n = min(self.num_envs, rows - written)
            src = (np.arange(n) + written) % envs
            k = adds % steps
            writer.add(**{name: torch.from_numpy(np.ascontiguousarray(values[k][src]))
                          for name, values in rec.items()})
            written += n
            adds += 1
        return {"label": PREFILL_LABEL, "rows": written, "adds": adds, "ms": (time.perf_counter() - t0) * 1e3,
                "source": self.recording.meta}

    def close(self) -> None:
        """Stop the physics thread pools."""
        self.sim.close()

    def __enter__(self) -> "Collector":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _scatter(noise, rows: np.ndarray, n: int):
    """Noise drawn for `rows` placed into full-batch arrays (zeros elsewhere; those rows are sliced away)."""
    def one(values: np.ndarray) -> np.ndarray:
        full = np.zeros((n,) + values.shape[1:], values.dtype)
        full[rows] = values
        return full

    return tuple(one(v) for v in noise) if isinstance(noise, tuple) else one(noise)
