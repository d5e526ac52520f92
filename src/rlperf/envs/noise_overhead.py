"""Cost of drawing a task's actor noise in-kernel: its update_state kernel with noise passed in vs drawn
in-kernel, and numpy single-thread generation of the same draws (issue 9 section 3 targets: overhead
<= 1.15x, the in-kernel draws >= 20x faster than numpy's). Arms are interleaved round by round and each
keeps its minimum, so a load spike on a shared box hits all arms alike and rarely survives the min.

    rlperf noise-overhead --task g1_motion_tracking --num-envs 32768 --threads 2 --rounds 50
"""

from __future__ import annotations

import importlib
import time

ARMS = ("kernel-noise-passed", "kernel-in-kernel-noise", "numpy-draws")
# task -> (package with the passed-noise WORKLOAD, module with the drawn WORKLOAD: numpy_draws(inputs))
TASKS = {"probe": ("rlperf.envs.probe", "rlperf.envs.probe.fused_noise"),
         "g1_motion_tracking": ("rlperf.envs.motion_tracking", "rlperf.envs.motion_tracking.fused_noise")}


def _arms(task: str, num_envs: int, threads: int, seed: int) -> dict:
    """The three zero-argument callables of `task`; the drawn kernel and numpy draw the same key (seed, 1)."""
    passed_mod, drawn_mod = (importlib.import_module(m) for m in TASKS[task])
    passed, drawn = passed_mod.WORKLOAD, drawn_mod.WORKLOAD
    profile = passed.default_profile
    drawn_inp = drawn.make_inputs(num_envs, profile, seed=seed, step=1)
    return dict(zip(ARMS, (passed.fused_runner(passed.make_inputs(num_envs, profile, seed=seed), threads),
                           drawn.fused_runner(drawn_inp, threads), lambda: drawn.numpy_draws(drawn_inp))))


def measure(num_envs: int, threads: int, *, task: str = "probe", rounds: int = 50, warmup: int = 3,
            seed: int = 0) -> dict:
    """Min-of-`rounds` ms per arm and the two ratios; the numpy arm is single-threaded by nature."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
    fns = _arms(task, num_envs, threads, seed)
    best = dict.fromkeys(ARMS, float("inf"))
    for r in range(warmup + rounds):
        for arm, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            dt = (time.perf_counter() - t0) * 1e3
            if r >= warmup:
                best[arm] = min(best[arm], dt)
    extra = best["kernel-in-kernel-noise"] - best["kernel-noise-passed"]
    return {"task": task, "num_envs": num_envs, "threads": threads, "rounds": rounds, "min_ms": best,
            "overhead_ratio": best["kernel-in-kernel-noise"] / best["kernel-noise-passed"],
            "in_kernel_draw_ms": extra,
            # how many times faster the in-kernel draws are than numpy's; None when the increment is in the noise
            "numpy_over_in_kernel_draws": best["numpy-draws"] / extra if extra > 0 else None}

