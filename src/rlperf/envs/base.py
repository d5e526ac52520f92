"""The contract every env-kernel workload implements: inputs, numpy reference, fused Numba kernel.

One workload package (e.g. rlperf.envs.motion_tracking) holds three files side by side:
`inputs.py` (seeded synthetic state), `reference.py` (vectorised numpy, the parity oracle) and
`fused.py` (one @njit(parallel=True) pass), plus a small module object satisfying `EnvWorkload`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np


@dataclass
class EnvOutputs:
    """What update_state produces for one step of N envs."""

    reward: np.ndarray  # (N,) float32, already multiplied by ctrl_dt
    terminated: np.ndarray  # (N,) bool
    actor_obs: np.ndarray  # (N, O) float32
    critic_obs: np.ndarray  # (N, C) float32
    term_logs: dict[str, float] = field(default_factory=dict)  # "reward/<name>" -> mean_envs(scale*term)


@dataclass(frozen=True)
class Tolerances:
    """Parity tolerances: |got - ref| <= atol + rtol * |ref| elementwise; terminations always exact."""

    reward_rtol: float
    reward_atol: float
    log_rtol: float
    log_atol: float
    obs_rtol: float
    obs_atol: float


class EnvWorkload(Protocol):
    """A task's update_state workload; see rlperf.envs.registry for the instances."""

    name: str
    profiles: tuple[str, ...]
    tolerances: Tolerances
    obs_dim: int
    critic_dim: int

    def make_inputs(self, num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0) -> Any:
        """Seeded synthetic state for `num_envs` envs, with the spec's fraction of terminating rows."""

    def reference(self, inputs: Any) -> EnvOutputs:
        """Vectorised numpy float32 update_state: the parity oracle."""

    def fused_runner(self, inputs: Any, num_threads: int) -> Callable[[], EnvOutputs]:
        """A zero-argument callable running the fused kernel on preallocated outputs (compiled already)."""

    def compile(self) -> float:
        """Compile (or load from cache) the fused kernel on tiny inputs; returns seconds spent."""
