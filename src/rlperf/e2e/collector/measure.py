"""Measure the collector on this machine: both MuJoCo steppers, and the collector step per arm, interleaved.

    rlperf collector --task g1_walk_flat --num-envs 16,64 --physics-threads 1,2 \
        --steps 8 --out-json out/collector/walk.json

Arms (kernel x reset path x physics) run one step each in turn, so a shared or noisy machine affects them
alike; per-phase medians are reported with the raw samples. The machine identity is stored with the result.
"""

from __future__ import annotations

import statistics
import time

SCHEMA, VERSION = "rlperf.e2e.collector", 1


def measure_steppers(num_envs: int, threads: int, repeats: int) -> dict:
    from rlperf.e2e.collector.physics import MujocoBatch

    import numpy as np

    batch = MujocoBatch(num_envs, ctrl_dt=0.02, threads=threads)
    try:
        result = batch.measure_steppers(np.tile(batch.key_ctrl, (num_envs, 1)), repeats=repeats)
        result.update({name: batch.cost_record(ms) for name, ms in result["ms_per_control_step"].items()})
        return result
    finally:
        batch.close()


def force_resets(collector, step: int, fraction: float) -> None:
    """Reset pressure as the benchmarks model it (C1): a rotating `fraction` of rows truncates this step."""
    if fraction <= 0:
        return
    import numpy as np

    n = collector.num_envs
    k = max(1, round(n * fraction))
    collector.steps[(np.arange(k) + step * k) % n] = collector.cfg.episode_steps - 1


def measure_arms(task: str, num_envs: int, arms: list[tuple[str, str, str]], budget, steps: int, warmup: int,
                 seed: int, reset_fraction: float = 0.0) -> list[dict]:
    from rlperf.e2e.collector import Collector
    from rlperf.workload import compose

    from rlperf.replay.storage import ReplayStorage

    wl = compose(task, "mujoco").with_envs(num_envs)
    capacity_rows = num_envs * max(2, warmup + steps + 1)  # as the reference collector A/B (C8)
    collectors = [Collector(wl, kernel=k, reset_path=r, physics=p, threads=budget, seed=seed,
                            replay_writer=ReplayStorage(wl.layout, capacity_rows)) for k, r, p in arms]
    samples = [[] for _ in arms]
    try:
        for step in range(warmup + steps):
            for c, out in zip(collectors, samples):
                force_resets(c, step, reset_fraction)
                timings = c.step()
                if step >= warmup:
                    out.append(timings)
    finally:
        for c in collectors:
            c.close()
    records = []
    for (k, r, p), c, out in zip(arms, collectors, samples):
        median = {phase: statistics.median(s[phase] for s in out) for phase in out[0]}
        least = {phase: min(s[phase] for s in out) for phase in out[0]}  # robust to preemption on shared boxes
        records.append({"task": task, "num_envs": num_envs, "kernel": k, "reset_path": r, "physics": p,
                        "median_ms": median, "min_ms": least, "forced_reset_fraction": reset_fraction,
                        "env_steps_per_s": num_envs / (median["total"] / 1e3),
                        "samples_ms": out, "meta": c.meta})
    return records


def measure(task: str, envs: list[int], threads: list[int], arms: list[tuple[str, str, str]], budget, *,
            steps: int, warmup: int, repeats: int, seed: int, reset_fraction: float, command: str) -> dict:
    """The result document (schema SCHEMA): steppers per (N, threads), then every arm per N."""
    from rlperf.measure.machine import machine_identity

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    steppers = [{"num_envs": n, "threads": t, **measure_steppers(n, t, repeats)} for n in envs for t in threads]
    collector = [r for n in envs for r in measure_arms(task, n, arms, budget, steps, warmup, seed, reset_fraction)]
    return {"schema": SCHEMA, "version": VERSION, "started_utc": started, "command": command,
            "machine": machine_identity(), "thread_budget": budget.as_dict(), "steppers": steppers,
            "collector": collector}
