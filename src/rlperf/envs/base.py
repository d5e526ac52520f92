"""The contract every env-kernel workload implements: inputs, numpy reference, fused Numba kernel.

One workload package (e.g. rlperf.envs.motion_tracking) holds three files side by side:
`inputs.py` (seeded synthetic state), `reference.py` (vectorised numpy, the parity oracle) and
`fused.py` (one @njit(parallel=True) pass), plus a small module object satisfying `EnvWorkload`.

The helpers at the bottom (`NCHUNKS`, `log_partials`, `reduce_term_logs`) are the shared convention for
per-term logs: a fused kernel runs `prange` over a fixed number of env chunks (independent of the thread
count), keeps a local accumulator per chunk and writes one padded row per chunk; the host reduces the
rows in chunk order in float64, so the logs are bitwise identical for any thread count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from rlperf.envs.tolerances import Tolerances, load as load_tolerances


@dataclass
class EnvOutputs:
    """What update_state produces for one step of N envs."""

    reward: np.ndarray  # (N,) float32, already multiplied by ctrl_dt
    terminated: np.ndarray  # (N,) bool
    actor_obs: np.ndarray  # (N, O) float32; (N, 0) when the profile's scope is reward + termination only
    critic_obs: np.ndarray  # (N, C) float32; (N, 0) likewise
    term_logs: dict[str, float] = field(default_factory=dict)  # "reward/<name>" -> mean_envs(scale*term)
    # Further float outputs compared by parity under the obs tolerance (e.g. the probe's final-obs copy).
    extras: dict[str, np.ndarray] = field(default_factory=dict)


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


# Optional attributes a workload may also carry (read with getattr, never required):
#   default_profile: str           the profile the CLI and asv use when none is named
#   bytes_per_env: int             streamed bytes per env per step (docs/limits.md 3.8)
#   scope(profile) -> str          what the kernel computes for that profile (e.g. "reward+termination")


NCHUNKS = 64  # env chunks per kernel call: fixed, so log sums never depend on the thread count
_ROW_PAD = 8  # float64 per 64 B cache line: one padded row per chunk, no false sharing


def log_partials(num_terms: int, nchunks: int = NCHUNKS) -> np.ndarray:
    """The zeroed (nchunks, padded num_terms) float64 array a fused kernel writes one row per chunk into."""
    width = -(-num_terms // _ROW_PAD) * _ROW_PAD
    return np.zeros((nchunks, width), dtype=np.float64)


def reduce_term_logs(partials: np.ndarray, names: Sequence[str], scales: Sequence[float],
                     num_envs: int) -> dict[str, float]:
    """`reward/<name>` -> mean over envs, for non-zero scales; rows summed in chunk order (deterministic)."""
    total = np.zeros(partials.shape[1], dtype=np.float64)
    for row in partials:  # explicit order: the sum is the same whatever threads wrote the rows
        total += row
    return {f"reward/{name}": float(total[k] / num_envs)
            for k, name in enumerate(names) if scales[k] != 0.0}


def first_call_seconds(kernel, args: tuple, what: str) -> float:
    """Seconds of `kernel(*args)` called once at 1 Numba thread (its compile, or its cache load), the
    thread count restored after; a kernel that specialised more than once is an error naming `what`:
    timed inputs must keep the one dtype/layout it compiled for."""
    import time

    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        kernel(*args)
        seconds = time.perf_counter() - t0
    finally:
        numba.set_num_threads(previous)
    if len(kernel.signatures) != 1:
        raise RuntimeError(f"{what} has {len(kernel.signatures)} specialisations; inputs must keep one dtype/layout")
    return seconds


def active_scales(scales: Mapping[str, float], names: Sequence[str]) -> np.ndarray:
    """A dense float64 scale vector over the kernel's static term slots (absent terms are 0)."""
    unknown = set(scales) - set(names)
    if unknown:
        raise ValueError(f"unsupported terms {sorted(unknown)}; kernel slots: {', '.join(names)}")
    return np.array([float(scales.get(name, 0.0)) for name in names], dtype=np.float64)


class ChunkedKernelWorkload:
    """A reusable EnvWorkload for kernels that follow the chunked-log convention above (walk, probe).

    Subclasses set the class attributes and `_inputs` / `_reference` / `_fused` module paths; the fused
    module must expose `launch(inputs, nchunks, out)` and the dispatcher named by `kernel_name`. Modules
    load lazily, so importing a workload never imports Numba.
    """

    name: str
    profiles: tuple[str, ...]
    default_profile: str
    obs_dim: int
    critic_dim: int
    bytes_per_env: int
    _inputs: str
    _reference: str
    _fused: str
    kernel_name: str

    def _module(self, path: str):
        import importlib

        return importlib.import_module(path)

    @property
    def tolerances(self) -> Tolerances:
        """Derived from observed differences (rlperf.envs.tolerances, scripts/derive_tolerances.py)."""
        return load_tolerances(self.name)

    @property
    def terms(self) -> tuple[str, ...]:
        """The kernel's reward-term slots, in log order: the inputs module's TERMS."""
        return self._module(self._inputs).TERMS

    def make_inputs(self, num_envs: int, profile: str, *, seed: int = 0, noise_level: float = 1.0) -> Any:
        return self._module(self._inputs).make_inputs(num_envs, profile, seed=seed, noise_level=noise_level)

    def reference(self, inputs: Any) -> EnvOutputs:
        return self._module(self._reference).update_state(inputs)

    def reference_literal(self, inputs: Any) -> EnvOutputs:
        """The literal numpy version (one expression per term), checked against the fast oracle."""
        return self._module(self._reference + "_literal").update_state(inputs)

    def scope(self, profile: str) -> str:
        return "reward+termination+obs+logs"

    def extra_outputs(self, inputs: Any) -> dict[str, np.ndarray]:
        """Preallocated extra outputs the kernel writes after the standard five (none by default)."""
        return {}

    @property
    def kernel(self):
        return getattr(self._module(self._fused), self.kernel_name)

    def fused_runner(self, inputs: Any, num_threads: int) -> Callable[[], EnvOutputs]:
        from rlperf.envs.threads import apply_budget

        n = inputs.num_envs
        reward = np.zeros(n, dtype=np.float32)
        terminated = np.zeros(n, dtype=np.bool_)
        actor = np.zeros((n, self.obs_dim), dtype=np.float32)
        critic = np.zeros((n, self.critic_dim), dtype=np.float32)
        partials = log_partials(len(self.terms))
        extras = self.extra_outputs(inputs)
        out = (reward, terminated, actor, critic, partials, *extras.values())
        actor_width = self.obs_dim if inputs.observations else 0  # (N, 0) views: reward+termination scope
        critic_width = self.critic_dim if inputs.observations else 0
        launch = self._module(self._fused).launch
        apply_budget(num_threads)

        def run() -> EnvOutputs:
            launch(inputs, NCHUNKS, out)
            logs = reduce_term_logs(partials, self.terms, inputs.scales, n)
            return EnvOutputs(reward, terminated, actor[:, :actor_width], critic[:, :critic_width], logs, extras)

        return run

    def compile(self) -> float:
        """First call at 1 thread on tiny inputs of the exact runtime types; seconds (compile or cache load)."""
        import time

        tiny = self.make_inputs(8, self.default_profile, seed=0)
        run = self.fused_runner(tiny, 1)
        t0 = time.perf_counter()
        run()
        seconds = time.perf_counter() - t0
        if len(self.kernel.signatures) != 1:
            raise RuntimeError(f"{self.name}: kernel has {len(self.kernel.signatures)} specialisations; "
                               "inputs must keep one dtype/layout")
        return seconds

    def compile_source(self) -> str:
        """'cache' if the kernel was loaded from Numba's cache, else 'compiled'."""
        stats = self.kernel.stats
        return "cache" if sum(stats.cache_hits.values()) else "compiled"
