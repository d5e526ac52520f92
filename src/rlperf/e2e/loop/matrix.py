"""Measure one (placement, schedule, prefetch) point of the iteration, replay against resident batches.

The same learner and collector run ROUNDS blocks with batches from the replay and ROUNDS blocks with
one batch already resident on the learner device, alternating (replay, resident, replay, resident)
so drift on a shared box lands on both sides. Exposed replay time (b) is the difference of the two.
"""

from __future__ import annotations

from dataclasses import asdict

from rlperf.e2e.loop.prefetch import ReplayBatches, ResidentBatches
from rlperf.e2e.loop.schedules import run_block

ROUNDS = 2


def _split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def measure_point(port, collector, learner, *, schedule: str, prefetch: str, iterations: int, warmup: int,
                  device, env_steps_per_sync: int, progress=None) -> dict:
    """Raw per-iteration samples of the replay-fed and the resident-fed iteration, measured interleaved;
    `progress.update()` after every iteration run, warmup and resident-fed included (2 x (warmup + iterations))."""
    replay, resident = ReplayBatches(port, prefetch), ResidentBatches(port)
    kw = dict(device=device, env_steps_per_sync=env_steps_per_sync)
    tick = progress.update if progress is not None else None
    if warmup:
        run_block(schedule, collector, learner, replay, iterations=warmup, on_iteration=tick, **kw)
        run_block(schedule, collector, learner, resident, iterations=warmup, on_iteration=tick, **kw)
    out = {"replay": [], "resident": []}
    for n in (n for n in _split(iterations, ROUNDS) if n):
        out["replay"] += run_block(schedule, collector, learner, replay, iterations=n, on_iteration=tick, **kw)
        out["resident"] += run_block(schedule, collector, learner, resident, iterations=n, on_iteration=tick, **kw)
    return {"schedule": schedule, "prefetch": prefetch, "rounds": ROUNDS, "warmup_iterations": warmup,
            "samples": {k: [asdict(s) for s in v] for k, v in out.items()}}


def profile_iteration(port, collector, learner, *, schedule: str, prefetch: str, device,
                      env_steps_per_sync: int, path) -> str:
    """One iteration under torch.profiler (CPU + CUDA activities), phases as record_function/NVTX ranges;
    written as a Chrome trace to `path` (a temp file renamed, like every output)."""
    from pathlib import Path

    import torch

    from rlperf.atomic import atomic_path

    activities = [torch.profiler.ProfilerActivity.CPU]
    if device is not None and device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    source = ReplayBatches(port, prefetch)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.profiler.profile(activities=activities) as prof:
        run_block(schedule, collector, learner, source, iterations=1, device=device,
                  env_steps_per_sync=env_steps_per_sync)
    with atomic_path(path, suffix=".json") as tmp:
        prof.export_chrome_trace(str(tmp))
    return str(path)
