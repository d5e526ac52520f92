"""THE case registry of the env benchmarks: (task, profile, envs, threads) points and sweeps.

asv (benchmarks/bench_env.py), the CLI (`rlperf env`) and the pytest tests all enumerate from here; none
re-declares env counts, thread counts or the quick subset (docs/workloads.md C7).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rlperf.envs.registry import TASKS

NUM_ENVS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
THREADS = (1, 2, 4, 8, 16, 32, 64)
ITERS, WARMUP, SEED = 80, 8, 0
PROFILE = "sac_default"  # the profile every front end uses unless told otherwise (probe: its only one)


@dataclass(frozen=True)
class Sweep:
    """A named set of sweep values and timing settings."""

    num_envs: tuple[int, ...]
    threads: tuple[int, ...]
    iters: int
    warmup: int
    profiles: tuple[str, ...] | None = None  # None: each task's default profile


FULL = Sweep(NUM_ENVS, THREADS, ITERS, WARMUP)
QUICK = Sweep((512, 2048), (2, 4), 10, 2, profiles=(PROFILE,))
# asv: small by default so `asv run --quick -b env` takes minutes on 2 cores; RLPERF_ASV_FULL=1 widens it.
ASV_SMALL = Sweep((512, 8192, 32768), (1, 2, 4, 8, 16), 10, 2)  # counts above the machine skip
PARITY_ENVS = (1, 7, 513, 8192)  # odd sizes exercise partial and empty chunks
PARITY_THREADS = (1, 2)


@dataclass(frozen=True)
class EnvCase:
    """One parameter point."""

    task: str
    profile: str
    num_envs: int
    threads: int

    @property
    def key(self) -> str:
        return f"{self.task}:{self.profile}:{self.num_envs}:{self.threads}"


def quick_threads(cap: int) -> tuple[int, ...]:
    """`--quick`'s thread counts on a machine of `cap` threads: one thread and the whole machine (both
    measured; a fixed 2,4 would skip half its points on a 2-core box)."""
    return tuple(dict.fromkeys((1, cap)))


def thread_sweep(cap: int, requested: tuple[int, ...] = THREADS) -> tuple[int, ...]:
    """Requested thread counts at or below `cap` (the default sweep stops at the machine)."""
    return tuple(t for t in requested if t <= cap)


def skip_reason(threads: int, cap: int) -> str | None:
    """Why a thread count cannot run here, or None."""
    if threads > cap:
        return (f"{threads} threads requested but this machine allows {cap} "
                f"(min of usable cores and NUMBA_NUM_THREADS)")
    return None


def enumerate_cases(task: str, profiles, num_envs, threads) -> list[EnvCase]:
    """Cases in run order: profile, then env count, then thread count (1 thread first, for baselines)."""
    return [EnvCase(task, p, n, t) for p in profiles for n in sorted(num_envs) for t in sorted(threads)]


def asv_sweep() -> Sweep:
    return FULL if os.environ.get("RLPERF_ASV_FULL") == "1" else ASV_SMALL


def asv_params() -> dict[str, list]:
    """Parameter lists for the asv env classes (tasks, env counts, thread counts)."""
    sweep = asv_sweep()
    return {"task": list(TASKS), "num_envs": list(sweep.num_envs), "threads": list(sweep.threads),
            "parity_envs": list(PARITY_ENVS[-1:] if sweep is ASV_SMALL else PARITY_ENVS)}
