"""Time one noise case and check the counter generator's thread-count independence (CLI and asv share it)."""

from __future__ import annotations

import numpy as np

from rlperf.envs.noise import cases, variants
from rlperf.measure.stats import summarize
from rlperf.measure.timing import time_wall


def time_case(case: cases.NoiseCase, *, iters: int, warmup: int, seed: int) -> list[float]:
    """Wall-clock ms per fill of one step of (num_envs, 64) values; the filler's pool is closed after."""
    scales = cases.PROFILES[case.task].scales()
    filler = variants.make(case.variant, case.dist, case.num_envs, scales, threads=case.threads, seed=seed)
    try:
        filler.fill()  # pool start-up and first touch of the buffer, untimed
        return time_wall(filler.fill, warmup=warmup, repeat=iters)
    finally:
        filler.close()


def record(case: cases.NoiseCase, samples: list[float], width: int) -> dict:
    stats = summarize(samples)
    values = case.num_envs * width
    return {"task": case.task, "variant": case.variant, "dist": case.dist, "num_envs": case.num_envs,
            "threads": case.threads, **{k: stats[k] for k in ("median_ms", "mean_ms", "min_ms", "std_ms")},
            "ns_per_value": stats["median_ms"] * 1e6 / values, "values": values, "samples_ms": samples}


def add_speedups(records: list[dict]) -> None:
    """speedup_vs_numpy: numpy (1 thread, same dist and envs) median over this case's median."""
    base = {(r["dist"], r["num_envs"]): r["median_ms"] for r in records if r["variant"] == "numpy"}
    for r in records:
        ref = base.get((r["dist"], r["num_envs"]))
        r["speedup_vs_numpy"] = None if ref is None else ref / r["median_ms"]


def counter_thread_independent(task: str, dist: str, num_envs: int, thread_counts: list[int], seed: int) -> bool:
    """True if the counter variant draws bit-identical arrays at every thread count in `thread_counts`."""
    scales = cases.PROFILES[task].scales()
    draws = []
    for threads in thread_counts:
        filler = variants.make("counter-numba", dist, num_envs, scales, threads=threads, seed=seed)
        filler.fill()
        draws.append(filler.out.copy())
    return all(np.array_equal(draws[0], d) for d in draws[1:])
