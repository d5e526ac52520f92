"""Physics states recorded once from MuJoCo, replayed so the collector's other costs show (`physics="recorded"`).

A short run of the real collector (MuJoCo, the same policy, kernel and seed) is recorded: the full-physics
state and sensordata of every env after every step, the states that resets produced, and the transitions
written to the replay (for prefill). Playback tiles the recorded envs over N envs with a per-copy time
offset; a reset takes a recorded reset state, since there is no physics to forward a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlperf.e2e.collector.physics import StateRows

RECORD_ENVS = 32
RECORD_STEPS = 48


class TransitionLog:
    """A replay writer that keeps numpy copies of what `add` received (recording, tests)."""

    def __init__(self) -> None:
        self.adds: list[dict[str, np.ndarray]] = []

    def add(self, **fields) -> None:
        self.adds.append({k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)).copy()
                          for k, v in fields.items() if v is not None})


@dataclass(frozen=True)
class Recording:
    states: np.ndarray  # (T, R, nstate) after each step (resets included)
    sensordata: np.ndarray  # (T, R, nsensordata)
    reset_states: np.ndarray  # (K, nstate)
    reset_sensordata: np.ndarray  # (K, nsensordata)
    transitions: dict  # field -> (T, R, ...) as written by writer.add
    meta: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return self.states.shape[0]

    @property
    def envs(self) -> int:
        return self.states.shape[1]


def record(collector, steps: int = RECORD_STEPS) -> Recording:
    """Run `collector` (MuJoCo physics, a TransitionLog writer) for `steps` steps and keep what it produced."""
    sim = collector.sim
    log = collector.replay_writer
    states, sensors = [], []
    reset_states, reset_sensors = [sim.state.copy()], [sim.sensordata.copy()]  # construction reset all envs
    for _ in range(steps):
        collector.step()
        states.append(sim.state.copy())
        sensors.append(sim.sensordata.copy())
        rows = collector.last_reset_rows
        if rows.size:
            reset_states.append(sim.state[rows].copy())
            reset_sensors.append(sim.sensordata[rows].copy())
    transitions = {k: np.stack([a[k] for a in log.adds]) for k in log.adds[0]}
    meta = {"recorded_envs": collector.num_envs, "recorded_steps": steps, "physics": "mujoco",
            "stepper": sim.stepper, "kernel": collector.kernel, "seed": collector.seed}
    return Recording(np.stack(states), np.stack(sensors), np.concatenate(reset_states),
                     np.concatenate(reset_sensors), transitions, meta)


class RecordedBatch(StateRows):
    """Plays a Recording back over N envs with MujocoBatch's interface; never steps physics."""

    stepper = "recorded"

    def __init__(self, recording: Recording, num_envs: int, like):
        self.recording = recording
        self.model, self.sensors = like.model, like.sensors
        self.key_qpos, self.key_ctrl = like.key_qpos, like.key_ctrl
        self.nq, self.nv, self.nu = like.nq, like.nv, like.nu
        self.qpos_start, self.qvel_start = like.qpos_start, like.qvel_start
        self.substeps = like.substeps
        self.threads = 1
        self.num_envs = num_envs
        self.substeps_run = 0
        envs = np.arange(num_envs)
        self._source = envs % recording.envs
        self._offset = envs // recording.envs  # copies of one recorded env run shifted in time
        self._t = 0
        self.state = recording.states[0][self._source].copy()
        self.sensordata = recording.sensordata[0][self._source].copy()

    def step(self, ctrl: np.ndarray) -> None:
        self._t += 1
        frame = (self._t + self._offset) % self.recording.steps
        self.state[:] = self.recording.states[frame, self._source]
        self.sensordata[:] = self.recording.sensordata[frame, self._source]

    def write_rows(self, rows: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """A recorded reset state per row (the sampled qpos/qvel cannot be forwarded without physics)."""
        pick = (rows + self._t) % self.recording.reset_states.shape[0]
        self.state[rows] = self.recording.reset_states[pick]
        self.sensordata[rows] = self.recording.reset_sensordata[pick]

    def forward(self, rows: np.ndarray | None = None) -> None:
        """Nothing to do: recorded sensordata already matches the recorded state."""

    def close(self) -> None:
        pass
