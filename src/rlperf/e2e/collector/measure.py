"""Measure the collector on this machine: both MuJoCo steppers, and the collector step per arm, interleaved.

    python -m rlperf.e2e.collector.measure --task g1_walk_flat --num-envs 16,64 --physics-threads 1,2 \
        --steps 8 --out-json out/collector/walk.json

Arms (kernel x reset path x physics) run one step each in turn, so a shared or noisy machine affects them
alike; per-phase medians are reported with the raw samples. The machine identity is stored with the result.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

from rlperf.commands.args import at_least, parse_positive_list, writable_file
from rlperf.errors import EXIT_USAGE, UsageError, choice_error

SCHEMA, VERSION = "rlperf.e2e.collector", 1


def _choices(text: str, what: str, valid) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    for v in values:
        if v not in valid:
            raise choice_error(what, v, valid)
    if not values:
        raise UsageError(f"{what}: give at least one of {', '.join(valid)}")
    return values


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

    wl = compose(task, "mujoco")
    capacity = num_envs * max(2, warmup + steps + 1)  # as the reference collector A/B (C8)
    collectors = [Collector(wl, num_envs=num_envs, kernel=k, reset_path=r, physics=p, threads=budget, seed=seed,
                            replay_writer=ReplayStorage(wl.layout, capacity)) for k, r, p in arms]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rlperf.e2e.collector.measure", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="g1_walk_flat")
    parser.add_argument("--num-envs", default="16,64")
    parser.add_argument("--physics-threads", default="1,2", help="stepper sweep thread counts")
    parser.add_argument("--kernels", default="fused,numpy")
    parser.add_argument("--reset-paths", default="rows,full")
    parser.add_argument("--physics", default="mujoco,recorded")
    parser.add_argument("--numba-threads", type=int, default=1)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="stepper timing repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reset-fraction", type=float, default=0.02,
                        help="rows forced to truncate each step (C1 models 2%%); 0 leaves episodes alone")
    parser.add_argument("--out-json")
    args = parser.parse_args(argv)
    try:
        from rlperf.e2e.collector import KERNELS, PHYSICS, RESET_PATHS, ThreadBudget
        from rlperf.e2e.collector.config import TASKS

        if args.task not in TASKS:
            raise choice_error("task", args.task, TASKS)
        envs = parse_positive_list(args.num_envs, "--num-envs")
        threads = parse_positive_list(args.physics_threads, "--physics-threads")
        arms = list(itertools.product(_choices(args.kernels, "kernel", KERNELS),
                                      _choices(args.reset_paths, "reset path", RESET_PATHS),
                                      _choices(args.physics, "physics", PHYSICS)))
        at_least("--steps", args.steps, 1)
        at_least("--warmup", args.warmup, 0)
        at_least("--repeats", args.repeats, 1)
        if not 0.0 <= args.reset_fraction <= 1.0:
            raise UsageError(f"--reset-fraction: {args.reset_fraction} must lie in [0, 1]")
        budget = ThreadBudget(max(threads), at_least("--numba-threads", args.numba_threads, 1),
                              at_least("--torch-threads", args.torch_threads, 1))
        if args.out_json:
            writable_file(Path(args.out_json), "--out-json")
        from rlperf.e2e.collector.assets import require_mujoco, scene_path

        require_mujoco()
        scene_path()
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from rlperf.measure.machine import machine_identity
    from rlperf.report.jsonio import write_json

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    steppers = [{"num_envs": n, "threads": t, **measure_steppers(n, t, args.repeats)}
                for n in envs for t in threads]
    collector = [r for n in envs for r in measure_arms(args.task, n, arms, budget, args.steps, args.warmup,
                                                        args.seed, args.reset_fraction)]
    command = " ".join(["python -m rlperf.e2e.collector.measure", *(sys.argv[1:] if argv is None else argv)])
    doc = {"schema": SCHEMA, "version": VERSION, "started_utc": started, "command": command,
           "machine": machine_identity(), "thread_budget": budget.as_dict(), "steppers": steppers,
           "collector": collector}
    for s in steppers:
        ms = s["ms_per_control_step"]
        print(f"steppers N={s['num_envs']} threads={s['threads']}: rollout {ms['rollout']:.2f} ms, "
              f"pool {ms['pool']:.2f} ms per control step -> {s['fastest']} "
              f"({s[s['fastest']]['per_env_mj_step_us']:.1f} us per env mj_step)")
    for r in collector:
        print(f"{r['task']} N={r['num_envs']} {r['kernel']:5s} reset={r['reset_path']:4s} {r['physics']:8s} "
              + " ".join(f"{k}={v:.2f}" for k, v in r["median_ms"].items())
              + f" | min total={r['min_ms']['total']:.2f} update_state={r['min_ms']['update_state']:.2f}"
              f" reset_done={r['min_ms']['reset_done']:.2f}")
    if args.out_json:
        print(f"wrote {write_json(args.out_json, doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
