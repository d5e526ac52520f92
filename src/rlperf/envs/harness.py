"""Measure env cases: numpy and fused timings, compile time (on its own), derived ratios, parity.

Shared by the CLI and asv. Compile happens in `prepare`, at 1 thread, before anything is timed; every
timing is a synchronous wall clock (CPU only) with warm-up calls discarded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rlperf.envs import parity, registry, threads
from rlperf.envs.base import EnvWorkload
from rlperf.envs.cases import EnvCase
from rlperf.measure.stats import summarize
from rlperf.measure.timing import time_wall


@dataclass
class Prepared:
    """A workload whose kernel is compiled (or loaded from cache), with how long that took."""

    workload: EnvWorkload
    compile_ms: float
    compile_source: str
    threading: dict


def prepare(task: str) -> Prepared:
    """Choose the threading layer, then compile at 1 thread; the compile time is recorded, never timed."""
    info = threads.prepare_numba()
    workload = registry.get(task)
    threads.apply_budget(1)
    seconds = workload.compile()
    source = workload.compile_source() if hasattr(workload, "compile_source") else "unknown"
    info["threading_layer"] = threads.threading_layer()
    return Prepared(workload, seconds * 1e3, source, info)


def time_reference(workload: EnvWorkload, inputs, *, iters: int, warmup: int) -> list[float]:
    """Samples (ms) of the numpy reference on `inputs`."""
    return time_wall(lambda: workload.reference(inputs), warmup=warmup, repeat=iters)


def time_fused(workload: EnvWorkload, inputs, num_threads: int, *, iters: int, warmup: int):
    """Samples (ms) of the fused kernel at `num_threads`, and the thread budget in effect."""
    run = workload.fused_runner(inputs, num_threads)
    budget = threads.apply_budget(num_threads)
    return time_wall(run, warmup=warmup, repeat=iters), budget


def timing(samples: list[float]) -> dict:
    return {"samples_ms": samples, **summarize(samples)}


def case_record(case: EnvCase, numpy_samples: list[float], numba_samples: list[float], budget,
                parity_result: parity.ParityResult, compile_ms: float) -> dict:
    """One result row. Ratios use medians (robust on shared runners); raw samples are kept."""
    numpy_t, numba_t = timing(numpy_samples), timing(numba_samples)
    return {
        "task": case.task, "profile": case.profile, "num_envs": case.num_envs, "threads": case.threads,
        "numpy_ms": numpy_t["median_ms"], "numba_ms": numba_t["median_ms"],
        "speedup_vs_numpy": numpy_t["median_ms"] / numba_t["median_ms"],
        "parallel_speedup_vs_numba_1t": None, "parallel_efficiency": None,
        "env_steps_per_s": case.num_envs / (numba_t["median_ms"] / 1e3),
        "compile_ms": compile_ms, "numpy": numpy_t, "numba": numba_t, "thread_budget": budget.as_dict(),
        "parity": parity_result.as_dict(), "parity_ok": parity_result.ok,
    }


def derive_parallel(records: list[dict]) -> None:
    """Fill parallel speedup vs the 1-thread kernel and efficiency (= speedup / threads) where measured."""
    one = {(r["profile"], r["num_envs"]): r["numba_ms"] for r in records if r["threads"] == 1}
    for r in records:
        base = one.get((r["profile"], r["num_envs"]))
        if base is not None:
            r["parallel_speedup_vs_numba_1t"] = base / r["numba_ms"]
            r["parallel_efficiency"] = r["parallel_speedup_vs_numba_1t"] / r["threads"]


_COPY_CEILINGS: dict[tuple[int, int], dict] = {}  # (threads, copy bytes) -> rate, measured once per process


def copy_ceiling(threads_: int, touched_bytes: int) -> dict:
    """The host copy rate at `threads_` Numba threads over the kernel's footprint (see copy_rate)."""
    from rlperf.envs.copy_rate import copy_bytes_for, host_copy_rate, repeats_for

    nbytes = copy_bytes_for(touched_bytes)
    if (threads_, nbytes) not in _COPY_CEILINGS:
        _COPY_CEILINGS[threads_, nbytes] = host_copy_rate(threads_, nbytes=nbytes, repeat=repeats_for(nbytes))
    return _COPY_CEILINGS[threads_, nbytes]


def measure_case(prepared: Prepared, case: EnvCase, *, iters: int, warmup: int, seed: int,
                 numpy_samples: list[float] | None = None, timed_inputs=None, parity_inputs=None) -> dict:
    """Everything for one case; pass `numpy_samples` / inputs to reuse them across thread counts.

    The memory floor uses the host copy rate at the case's own thread count and footprint (copy_ceiling).
    """
    from rlperf.envs.copy_rate import floor_fields

    w = prepared.workload
    timed_inputs = timed_inputs or w.make_inputs(case.num_envs, case.profile, seed=seed, noise_level=1.0)
    if numpy_samples is None:
        numpy_samples = time_reference(w, timed_inputs, iters=iters, warmup=warmup)
    numba_samples, budget = time_fused(w, timed_inputs, case.threads, iters=iters, warmup=warmup)
    result = parity.check(w, case.profile, case.num_envs, case.threads, seed=seed, inputs=parity_inputs)
    record = case_record(case, numpy_samples, numba_samples, budget, result, prepared.compile_ms)
    per_env = getattr(w, "bytes_per_env", None)  # streamed bytes, to compare with the memory floor (docs/limits.md 3.8)
    record["stream_gb_per_s"] = per_env * case.num_envs / (record["numba_ms"] * 1e6) if per_env else None
    ceiling = copy_ceiling(case.threads, per_env * case.num_envs) if per_env else None
    record.update(floor_fields(per_env, case.num_envs, record["numba_ms"], ceiling))
    return record


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
