"""Thread pools of the env benchmarks: Numba layer choice, Numba/torch budgets, and what was recorded.

Why: a spinning OpenMP pool costs milliseconds per call after a gap (docs/limits.md 3.1), and Numba plus torch
pools above the core count made the reference collector 2.5x slower (docs/limits.md 3.2). So the layer is chosen before
Numba's first parallel launch (TBB when the `tbb` wheel is installed), pools get disjoint budgets, and
every result records what was actually in effect.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.metadata
import os
import sys
from dataclasses import asdict, dataclass


def available_cores() -> int:
    """CPUs this process may run on (affinity mask, else os.cpu_count())."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def preload_tbb() -> str | None:
    """Load the `tbb` wheel's libtbb with RTLD_GLOBAL so Numba can pick TBB; the path, or None.

    Must run before Numba's first parallel launch: the wheel puts libtbb.so.12 in <prefix>/lib, which
    Numba's loader does not search, so without this Numba silently falls back to omp/workqueue.
    """
    try:
        importlib.metadata.distribution("tbb")
    except importlib.metadata.PackageNotFoundError:
        return None
    for lib in sorted(glob.glob(os.path.join(sys.prefix, "lib", "libtbb.so*"))):
        try:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            return lib
        except OSError:
            continue
    return None


def prepare_numba() -> dict:
    """Call once per process before any kernel compiles; returns how the layer was chosen."""
    tbb = preload_tbb()
    import numba

    return {"requested_layer": os.environ.get("NUMBA_THREADING_LAYER", numba.config.THREADING_LAYER),
            "tbb_preloaded": tbb, "numba_max_threads": int(numba.config.NUMBA_NUM_THREADS)}


def threading_layer() -> str:
    """The layer Numba actually launched with ('unlaunched' before the first parallel call)."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "unlaunched"


def max_numba_threads() -> int:
    """The largest thread count a sweep may use: Numba's pool ceiling, capped at the usable cores."""
    import numba

    return min(int(numba.config.NUMBA_NUM_THREADS), available_cores())


@dataclass(frozen=True)
class ThreadBudget:
    """Pool sizes in effect while a kernel is timed; numba + torch never exceeds cores."""

    cores: int
    numba_threads: int
    torch_threads: int  # 0: torch is not loaded in this process, so it has no pool
    torch_loaded: bool

    def as_dict(self) -> dict:
        return asdict(self)


def apply_budget(numba_threads: int) -> ThreadBudget:
    """Set Numba's thread mask on this (the launching) thread and give torch the remaining cores.

    torch is never imported here: if it is not loaded it has no pool to oversubscribe. If it is, it gets
    `cores - numba_threads` threads, at least 1 (torch's minimum; the only case where the sum can reach
    cores + 1, and then torch is idle while the kernel runs).
    """
    import numba

    cores = available_cores()
    if not 1 <= numba_threads <= max_numba_threads():
        raise ValueError(f"{numba_threads} Numba threads requested; this machine allows 1..{max_numba_threads()}")
    numba.set_num_threads(numba_threads)  # thread-local mask: applies to kernels launched from here
    torch = sys.modules.get("torch")
    torch_threads = 0
    if torch is not None:
        torch.set_num_threads(max(1, cores - numba_threads))
        torch_threads = torch.get_num_threads()
    return ThreadBudget(cores=cores, numba_threads=numba.get_num_threads(), torch_threads=torch_threads,
                        torch_loaded=torch is not None)
