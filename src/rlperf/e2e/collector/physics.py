"""N G1 envs stepped by MuJoCo: `mujoco.rollout` on a thread pool, or our own pool over MjData.

State is canonical in numpy: one full-physics state row (time, qpos, qvel, ...) and one sensordata row per
env. Both steppers read and write exactly those arrays, so resets, recording and state extraction never
depend on which stepper ran. The per-thread MjData hold no env state between calls (set, step, get), which
keeps memory flat at any N; each control step starts from a zero solver warm start in both steppers, so an
env's trajectory never depends on thread scheduling and the two steppers agree. mj_step releases the GIL,
so the pool scales with threads.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from rlperf.e2e.collector.assets import KEYFRAME, load_model, require_mujoco

STEPPERS = ("rollout", "pool")


def substeps_for(ctrl_dt: float, timestep: float) -> int:
    """Decimation: physics substeps per control step (0.02 / 0.002 -> 10); rejects a non-integer ratio."""
    ratio = ctrl_dt / timestep
    n = int(round(ratio))
    if n < 1 or abs(ratio - n) > 1e-6:
        raise ValueError(f"ctrl_dt {ctrl_dt} is not a whole multiple of the model timestep {timestep}")
    return n


class StateRows:
    """qpos and qvel as views into the (N, state size) full-physics state rows, for every batch of envs
    with MujocoBatch's interface (the simulated one and the recorded one)."""

    state: np.ndarray
    qpos_start: int
    qvel_start: int
    nv: int

    @property
    def qpos(self) -> np.ndarray:
        return self.state[:, self.qpos_start:self.qvel_start]

    @property
    def qvel(self) -> np.ndarray:
        return self.state[:, self.qvel_start:self.qvel_start + self.nv]


class MujocoBatch(StateRows):
    """N envs of one shared MjModel; `step(ctrl)` runs `substeps` mj_steps per env with ctrl held."""

    def __init__(self, num_envs: int, *, ctrl_dt: float, threads: int, stepper: str = "rollout"):
        if stepper not in STEPPERS:
            raise ValueError(f"unknown stepper {stepper!r}; valid: {', '.join(STEPPERS)}")
        self.mujoco = mj = require_mujoco()
        self.model, self.sensors = load_model()
        self.num_envs = num_envs
        self.threads = max(1, min(threads, num_envs))
        self.stepper = stepper
        self.substeps = substeps_for(ctrl_dt, float(self.model.opt.timestep))
        self.spec = mj.mjtState.mjSTATE_FULLPHYSICS
        m = self.model
        self.nq, self.nv, self.nu = m.nq, m.nv, m.nu
        self.qpos_start = mj.mj_stateSize(m, mj.mjtState.mjSTATE_TIME)
        self.qvel_start = self.qpos_start + self.nq
        self.state = np.zeros((num_envs, mj.mj_stateSize(m, self.spec)))
        self.sensordata = np.zeros((num_envs, m.nsensordata))
        self._datas = [mj.MjData(m) for _ in range(self.threads)]
        self._chunks = np.array_split(np.arange(num_envs), self.threads)
        self._executor = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self._rollout = None
        self._control = np.zeros((num_envs, self.substeps, self.nu))
        self._warmstart = np.zeros((num_envs, self.nv))  # every control step starts cold: deterministic
        self._out_state = np.zeros((num_envs, self.substeps, self.state.shape[1]))
        self._out_sensors = np.zeros((num_envs, self.substeps, m.nsensordata))
        self.substeps_run = 0  # mj_steps executed per env, summed (tests use it to prove recorded mode steps none)
        key = self.model.key(KEYFRAME)
        self.key_qpos = np.array(key.qpos, dtype=np.float64)
        self.key_ctrl = np.array(key.ctrl, dtype=np.float64)
        self.write_rows(np.arange(num_envs), np.tile(self.key_qpos, (num_envs, 1)), np.zeros((num_envs, self.nv)))
        self.forward()

    # ---- stepping ----------------------------------------------------------------------------
    def step(self, ctrl: np.ndarray) -> None:
        """One control step for every env: `substeps` mj_steps with `ctrl` (N, nu) held."""
        if self.stepper == "rollout":
            self._step_rollout(ctrl)
        else:
            self._map(self._step_chunk, ctrl)
        self.substeps_run += self.substeps

    def _step_rollout(self, ctrl: np.ndarray) -> None:
        from mujoco import rollout

        if self._rollout is None:
            self._rollout = rollout.Rollout(nthread=self.threads)
        self._control[:] = ctrl[:, None, :]
        self._rollout.rollout(self.model, self._datas, self.state, self._control, nstep=self.substeps,
                              initial_warmstart=self._warmstart,
                              state=self._out_state, sensordata=self._out_sensors)
        # sensordata of the last mj_step: computed in its forward pass, before integration (as MJX/Playground)
        self.state[:] = self._out_state[:, -1]
        self.sensordata[:] = self._out_sensors[:, -1]

    def _step_chunk(self, data, rows, ctrl) -> None:
        mj, m, spec = self.mujoco, self.model, self.spec
        for i in rows:
            mj.mj_setState(m, data, self.state[i], spec)
            data.qacc_warmstart[:] = 0.0  # as rollout's zero initial_warmstart: results never depend on
            data.ctrl[:] = ctrl[i]        # which thread stepped the env before
            for _ in range(self.substeps):
                mj.mj_step(m, data)
            mj.mj_getState(m, data, self.state[i], spec)
            self.sensordata[i] = data.sensordata

    def _forward_chunk(self, data, rows, _unused) -> None:
        mj, m, spec = self.mujoco, self.model, self.spec
        for i in rows:
            mj.mj_setState(m, data, self.state[i], spec)
            mj.mj_forward(m, data)
            self.sensordata[i] = data.sensordata

    def _map(self, fn, arg, rows: np.ndarray | None = None) -> None:
        chunks = self._chunks if rows is None else np.array_split(rows, self.threads)
        if self._executor is None:
            fn(self._datas[0], chunks[0] if rows is None else rows, arg)
            return
        futures = [self._executor.submit(fn, data, chunk, arg) for data, chunk in zip(self._datas, chunks)
                   if len(chunk)]
        for future in futures:
            future.result()

    # ---- state writes ------------------------------------------------------------------------
    def write_rows(self, rows: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Write qpos/qvel of `rows` (time 0, the rest of the state zeroed); `forward` makes sensors match."""
        self.state[rows] = 0.0
        self.state[rows, self.qpos_start:self.qvel_start] = qpos
        self.state[rows, self.qvel_start:self.qvel_start + self.nv] = qvel

    def forward(self, rows: np.ndarray | None = None) -> None:
        """mj_forward for `rows` (all envs when None): sensordata matches the state written."""
        self._map(self._forward_chunk, None, rows)

    # ---- choosing a stepper by measurement -----------------------------------------------------
    def measure_steppers(self, ctrl: np.ndarray, repeats: int = 3) -> dict:
        """Interleaved timing of both steppers from the same state; the state is restored after each run.

        Returns ms per control step (min over repeats) per stepper and the fastest; the stepper in use is kept.
        """
        saved_state, saved_sensors = self.state.copy(), self.sensordata.copy()
        in_use = self.stepper
        samples = {name: [] for name in STEPPERS}
        for _ in range(repeats):
            for name in STEPPERS:
                self.stepper = name
                t0 = time.perf_counter()
                self.step(ctrl)
                samples[name].append((time.perf_counter() - t0) * 1e3)
                self.state[:], self.sensordata[:] = saved_state, saved_sensors
        self.substeps_run -= repeats * len(STEPPERS) * self.substeps
        self.stepper = in_use
        best = {name: min(s) for name, s in samples.items()}
        return {"ms_per_control_step": best, "fastest": min(best, key=best.get), "samples_ms": samples,
                "repeats": repeats, "num_envs": self.num_envs, "threads": self.threads}

    def cost_record(self, ms_per_step: float) -> dict:
        per_env_ms = ms_per_step / self.num_envs
        return {"per_env_control_step_us": per_env_ms * 1e3,
                "per_env_mj_step_us": per_env_ms * 1e3 / self.substeps}

    def close(self) -> None:
        if self._rollout is not None:
            self._rollout.close()
            self._rollout = None
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
