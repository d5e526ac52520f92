"""Cost of drawing a task's actor noise in-kernel: its update_state kernel with noise passed in vs drawn
in-kernel, and numpy single-thread generation of the same draws (issue 9 section 3 targets: overhead
<= 1.15x, the in-kernel draws >= 20x faster than numpy's). Arms are interleaved round by round and each
keeps its minimum, so a load spike on a shared box hits all arms alike and rarely survives the min.

`numpy_over_in_kernel_draws` divides by a difference of two minima, which is often <= 0 (no value) where
the draws cost little; `numpy_path_over_in_kernel` compares whole steps instead and always has a value.

    rlperf noise-overhead --task g1_motion_tracking --num-envs 32768 --threads 2 --rounds 50
"""

from __future__ import annotations

import importlib
import math
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


def numpy_path_over_in_kernel(min_ms: dict) -> float:
    """How many times faster one step is with the draws in the kernel than with numpy drawing them and
    the kernel taking them in: (numpy-draws + kernel-noise-passed) / kernel-in-kernel-noise, from each
    arm's min ms.

    Whole steps, not the draws alone: no difference of minima, so the ratio is finite and > 0 whenever
    the three minima are (the draws' own cost is often inside the two kernels' noise). The numpy path's
    two minima may come from different rounds, so their sum is at most its best step: the ratio errs in
    the numpy path's favour. Its numpy arm is the counter generator's numpy oracle on one thread (the
    values the kernel draws, bit for bit), as in `numpy_over_in_kernel_draws`."""
    values = {arm: min_ms[arm] for arm in ARMS}
    bad = {arm: v for arm, v in values.items() if not (math.isfinite(v) and v > 0)}
    if bad:
        raise ValueError(f"min ms must be finite and > 0 for every arm ({', '.join(ARMS)}); got {bad}")
    return (values["numpy-draws"] + values["kernel-noise-passed"]) / values["kernel-in-kernel-noise"]


def measure(num_envs: int, threads: int, *, task: str = "probe", rounds: int = 50, warmup: int = 3,
            seed: int = 0) -> dict:
    """Min-of-`rounds` ms per arm and the three ratios; the numpy arm is single-threaded by nature."""
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
            "numpy_over_in_kernel_draws": best["numpy-draws"] / extra if extra > 0 else None,
            "numpy_path_over_in_kernel": numpy_path_over_in_kernel(best)}

