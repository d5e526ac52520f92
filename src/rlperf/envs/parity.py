"""Parity as numbers: max abs differences per output and termination mismatches, judged by Tolerances.

Used alike by the tests, the CLI and asv. Parity always runs at noise level 0 (C6), by default on each
task's coverage inputs (`make_parity_inputs` in its inputs module: every term active for a known share
of rows, every termination branch reached), with the tolerances of rlperf.envs.tolerances. Non-finite
values match only themselves (NaN with NaN, +inf with +inf); a non-finite mismatch is an infinite diff.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rlperf.envs.base import EnvOutputs, EnvWorkload
from rlperf.envs.tolerances import Tolerances


def max_abs_diff(ref: np.ndarray, got: np.ndarray) -> float:
    """Largest |got - ref| over finite pairs; inf if shapes differ or non-finite values disagree."""
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if ref.shape != got.shape:
        return float("inf")
    if ref.size == 0:
        return 0.0
    same_nonfinite = (np.isnan(ref) & np.isnan(got)) | (np.isinf(ref) & (ref == got))
    finite = np.isfinite(ref) & np.isfinite(got)
    if not np.all(finite | same_nonfinite):
        return float("inf")
    return float(np.max(np.abs(ref[finite] - got[finite]), initial=0.0))


def within(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> bool:
    """Elementwise |got - ref| <= atol + rtol * |ref|, NaN matching NaN."""
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    return ref.shape == got.shape and bool(np.allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True))


@dataclass
class ParityResult:
    """One comparison of the fused kernel against the numpy oracle."""

    max_abs_reward_diff: float
    max_abs_log_diff: float
    max_abs_actor_obs_diff: float
    max_abs_critic_obs_diff: float
    termination_mismatch: int
    log_diffs: dict[str, float] = field(default_factory=dict)
    extra_diffs: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def compare(ref: EnvOutputs, got: EnvOutputs, tol: Tolerances) -> ParityResult:
    """Numbers and verdict for `got` against the oracle `ref`."""
    failures = []
    mismatch = int(np.count_nonzero(np.asarray(ref.terminated) != np.asarray(got.terminated)))
    if mismatch or ref.terminated.shape != got.terminated.shape:
        failures.append(f"terminations: {mismatch} mismatches (must be exact)")
    if not within(ref.reward, got.reward, tol.reward_rtol, tol.reward_atol):
        failures.append("reward")
    log_diffs = {}
    if set(ref.term_logs) != set(got.term_logs):
        failures.append(f"log keys differ: {sorted(set(ref.term_logs) ^ set(got.term_logs))}")
    for key in sorted(set(ref.term_logs) & set(got.term_logs)):
        log_diffs[key] = max_abs_diff(ref.term_logs[key], got.term_logs[key])
        if not within(ref.term_logs[key], got.term_logs[key], tol.log_rtol, tol.log_atol):
            failures.append(f"log {key}")
    obs = {"actor_obs": (ref.actor_obs, got.actor_obs), "critic_obs": (ref.critic_obs, got.critic_obs),
           **{k: (ref.extras[k], got.extras.get(k, np.empty(0))) for k in ref.extras}}
    diffs = {}
    for name, (a, b) in obs.items():
        diffs[name] = max_abs_diff(a, b)
        if not within(a, b, tol.obs_rtol, tol.obs_atol):
            failures.append(name)
    return ParityResult(
        max_abs_reward_diff=max_abs_diff(ref.reward, got.reward),
        max_abs_log_diff=max(log_diffs.values(), default=0.0),
        max_abs_actor_obs_diff=diffs.pop("actor_obs"),
        max_abs_critic_obs_diff=diffs.pop("critic_obs"),
        termination_mismatch=mismatch, log_diffs=log_diffs, extra_diffs=diffs, failures=failures)


def make_parity_inputs(workload: EnvWorkload, num_envs: int, profile: str, *, seed: int = 0) -> Any:
    """The task's noise-free coverage inputs (its inputs module's `make_parity_inputs`)."""
    from rlperf.envs.registry import PACKAGES

    module = importlib.import_module(f"{PACKAGES[workload.name]}.inputs")
    return module.make_parity_inputs(num_envs, profile, seed=seed)


def check(workload: EnvWorkload, profile: str, num_envs: int, threads: int, *, seed: int = 0,
          inputs=None, tolerances: Tolerances | None = None) -> ParityResult:
    """Run oracle and kernel on the same noise-free inputs (coverage inputs unless given) and compare."""
    if inputs is None:
        inputs = make_parity_inputs(workload, num_envs, profile, seed=seed)
    ref = workload.reference(inputs)
    got = workload.fused_runner(inputs, threads)()
    return compare(ref, got, workload.tolerances if tolerances is None else tolerances)


def term_names(workload: EnvWorkload) -> tuple[str, ...]:
    """The kernel's term slots, in scale-vector order."""
    return tuple(workload.terms)


def scale_vector(inputs) -> np.ndarray:
    """The dense float64 scale vector the kernel reads from `inputs` (walk-shaped or motion tracking)."""
    if isinstance(getattr(inputs, "scales", None), np.ndarray):
        return inputs.scales.copy()
    return np.asarray(inputs.profile.scales, dtype=np.float64)


def with_scales(inputs, scales: np.ndarray):
    """A shallow copy of `inputs` whose kernel and oracle read `scales` (state arrays are shared)."""
    scales = np.asarray(scales, dtype=np.float64)
    if isinstance(getattr(inputs, "scales", None), np.ndarray):
        return dataclasses.replace(inputs, scales=scales)
    return dataclasses.replace(inputs, profile=dataclasses.replace(inputs.profile, scales=tuple(scales)))


def term_alone(inputs, k: int):
    """`inputs` with every scale but slot k set to 0 (slot k keeps its value; it must be non-zero)."""
    scales = scale_vector(inputs)
    if scales[k] == 0.0:
        raise ValueError(f"slot {k} has scale 0 in profile {getattr(inputs, 'profile', '?')}; pick a profile "
                         "where it is active")
    alone = np.zeros_like(scales)
    alone[k] = scales[k]
    return with_scales(inputs, alone)


def active_share(reward: np.ndarray) -> float:
    """Fraction of envs whose reward is non-zero (with one scale alone: where that term contributes)."""
    reward = np.asarray(reward)
    return float(np.count_nonzero(reward != 0.0) / max(reward.size, 1))
