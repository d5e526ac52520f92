"""THE case registry of the noise benchmark (docs/workloads.md C9): profiles, variants, distributions, sweeps.

The CLI (`rlperf noise`), asv (benchmarks/bench_noise.py) and the tests enumerate from here. A profile is
a task's own actor-noise columns (64 values per env) with their per-column scales.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VARIANTS = ("numpy", "numpy-alloc", "numpy-threads", "counter-numba")
VARIANT_HELP = {
    "numpy": "one numpy Generator (PCG64) on one thread, filling a preallocated buffer (`out=`)",
    "numpy-alloc": "the env's current style: np.random.uniform / standard_normal, then astype(float32)",
    "numpy-threads": "one PCG64 per thread (SeedSequence.spawn), each filling a row slice in a thread pool",
    "counter-numba": "splitmix64 keyed by (seed, step, env, k) in a Numba prange: thread-count independent",
}
SINGLE_THREAD = ("numpy", "numpy-alloc")  # run at 1 thread only; other counts are recorded as skipped
DISTS = ("uniform", "normal")
NUM_ENVS = (1024, 2048, 4096, 8192, 16384, 32768)
THREADS = (1, 2, 4, 8, 16, 32, 64)
ITERS, WARMUP, SEED = 20, 5, 0
QUICK_NUM_ENVS, QUICK_THREADS, QUICK_ITERS, QUICK_WARMUP = (1024, 8192), (1, 2), 5, 1
ASV_NUM_ENVS, ASV_THREADS = (8192, 32768), (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class NoiseProfile:
    """A task's actor-noise columns: name, own distribution and the per-column scale (level x scale)."""

    name: str
    dist: str  # the distribution the task itself draws
    fields: tuple[tuple[str, int, float], ...]  # (field, width, scale)

    @property
    def width(self) -> int:
        return sum(w for _, w, _ in self.fields)

    def scales(self) -> np.ndarray:
        """float32 scale per column (noise level 1)."""
        return np.concatenate([np.full(w, s, dtype=np.float32) for _, w, s in self.fields])


PROFILES = {
    # C9: sac_g1_motion_tracking_mujoco and sac_g1_walk_flat_mujoco; D: the probe's Gaussian sigmas.
    "g1_motion_tracking": NoiseProfile("g1_motion_tracking", "uniform",
                                       (("linvel", 3, 0.1), ("gyro", 3, 0.2), ("joint_pos", 29, 0.01),
                                        ("dof_vel", 29, 1.5))),
    "g1_walk_flat": NoiseProfile("g1_walk_flat", "uniform",
                                 (("gyro", 3, 0.0), ("gravity", 3, 0.0), ("joint_pos", 29, 0.01),
                                  ("dof_vel", 29, 0.1))),
    "probe": NoiseProfile("probe", "normal",
                          (("gyro", 3, 0.2), ("gravity", 3, 0.05), ("dof_pos", 29, 0.03), ("dof_vel", 29, 1.5))),
}
TASKS = tuple(PROFILES)


@dataclass(frozen=True)
class NoiseCase:
    """One benchmark point."""

    task: str
    variant: str
    dist: str
    num_envs: int
    threads: int


def skip_reason(variant: str, threads: int, max_threads: int) -> str | None:
    """Why a (variant, threads) point is not run here, or None."""
    if variant in SINGLE_THREAD and threads != 1:
        return f"{variant} is single-threaded; measured at 1 thread only"
    if threads > max_threads:
        return f"{threads} threads requested; this machine allows {max_threads}"
    return None


def enumerate_cases(task: str, variants, dists, num_envs, threads) -> list[NoiseCase]:
    return [NoiseCase(task, v, d, n, t) for d in dists for v in variants for n in num_envs for t in threads]
