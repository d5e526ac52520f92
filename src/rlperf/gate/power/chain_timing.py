"""Step count per injected size, measured on this host in ONE process, variants interleaved.

Why: the cost of an injection is not linear in its step count, and it differs by host. 5 sqrt steps in
the walk kernel gave x1.10 on one 2-vCPU host; on the next, 5 gave x1.031 and 16 gave x1.52
(docs/gate.md, Detection power): short chains hide behind out-of-order execution, long ones expose their
latency. An older calibration timed each commit in its own process and fitted a line through two probes;
a box whose speed moves between processes once timed 8 steps faster than none. Here every candidate is
loaded into the same process and timed in rotation, one call each in turn (base, 2, 3, ... steps, a new
random order each round), and a candidate's size is the median over rounds of its time / the base's in
that round: the same drift-cancelling idea as the gate's paired sampling.

injection.calibrate writes the variants (variant_module(target, steps), 0 = the base) of the target's
file into a folder and runs this file BY PATH in a fresh process whose PYTHONPATH is the clone's src, so
the clone's own workload times them, at the target's point (POINTS); it prints one JSON line: the base's
median call (ms) and the quartiles of each candidate's ratios. This module therefore imports nothing of
rlperf but the measured packages (rlperf.envs, rlperf.replay), and those inside the runners.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import sys
import time

INJECTED_NUM_ENVS = 8192  # the walk target's point: EnvFused.time_fused('g1_walk_flat', 8192, 1)
VARIANT_PREFIX = "gate_power_walk_"


def variant_module(target: str, steps: int) -> str:
    """The module name of a target's variant with `steps` (0: the unchanged file)."""
    return f"gate_power_{target.replace('-', '_')}_{steps}"


_INPUTS: dict = {}


def _env_runner(workload, module_name: str, num_envs: int, threads: int):
    """The workload's own fused runner (what EnvFused.time_fused calls) with the kernel module swapped."""
    from rlperf.envs import registry

    key = (workload.name, num_envs)
    if key not in _INPUTS:  # one set of inputs for every variant, as the walk calibration always had
        _INPUTS[key] = workload.make_inputs(num_envs, registry.default_profile(workload), seed=0, noise_level=1.0)
    inputs = _INPUTS[key]
    module = importlib.import_module(module_name)
    if hasattr(type(workload), "_fused"):  # walk and probe: the module is an attribute
        variant = type("Variant", (type(workload),), {"_fused": module_name})()
    else:  # motion tracking: the kernel and its arguments come from the module
        variant = type("Variant", (type(workload),), {
            "kernel": property(lambda self: module.update_state_kernel),
            "kernel_args": lambda self, inp: module.kernel_args(inp)})()
    run = variant.fused_runner(inputs, threads)
    run()  # compile (or load from this process's cache dir)
    return run


def _walk(module_name: str):
    from rlperf.envs.walk import WORKLOAD

    return _env_runner(WORKLOAD, module_name, INJECTED_NUM_ENVS, 1)


def motion_threads() -> int:
    """The motion point's threads: 2 (EnvFused.time_fused('g1_motion_tracking', 32768, 2)), or 1 where this
    process may use one core only (then the 1-thread point is what the study measures; the JSON says so)."""
    return min(2, len(os.sched_getaffinity(0)))


def _motion_tracking(module_name: str):
    from rlperf.envs.motion_tracking import WORKLOAD

    return _env_runner(WORKLOAD, module_name, 32768, motion_threads())


def _noise(module_name: str):
    """fill_uniform of the variant at the point's shape: NoiseGeneration.track_ms('counter-numba',
    'uniform', 32768, 1), the step counter advancing as the benchmark's filler does."""
    import numba
    import numpy as np

    from rlperf.envs.noise.cases import PROFILES

    kernel = importlib.import_module(module_name).fill_uniform
    scales = np.ascontiguousarray(PROFILES["g1_motion_tracking"].scales(), dtype=np.float32)
    out = np.zeros((32768, scales.size), dtype=np.float32)
    state = {"step": 0}

    def run():
        numba.set_num_threads(1)
        kernel(np.uint64(0), np.uint64(state["step"]), scales, out)
        state["step"] += 1

    run()
    return run


_PLACEMENT = {}


def _replay_host(module_name: str):
    """The variant's HostReplay.cpu_sample on ONE placement set up as ReplayCpuSample.track_ms(20,
    'host', 1) sets it up (2^20 rows, torch threads = usable cores): the same storage for every variant."""
    from rlperf.replay.build import build_placement
    from rlperf.replay.cases import DEFAULT_SIM, DEFAULT_TASK, ReplayCase, default_torch_threads

    if "host" not in _PLACEMENT:
        case = ReplayCase(DEFAULT_TASK, DEFAULT_SIM, "host", 2**20, 1)
        placement = build_placement(case.spec, case.workload, case.capacity_rows, device=None,
                                    threads=default_torch_threads(1), seed=12345)
        placement.setup()
        _PLACEMENT["host"] = placement
    placement = _PLACEMENT["host"]
    sample = importlib.import_module(module_name).HostReplay.cpu_sample
    run = lambda: sample(placement)  # noqa: E731
    run()
    return run


RUNNERS = {"walk": _walk, "motion-tracking": _motion_tracking, "noise": _noise, "replay-host": _replay_host}


def measure(variants: str, candidates: list[int], rounds: int, calls: int, target: str = "walk") -> dict:
    """{steps: quartiles over rounds of (median call time of that variant / the base's)} in this
    process, and the base's median call (ms); `variants` holds the module files (write_variants)."""
    if variants not in sys.path:
        sys.path.insert(0, variants)
    runs = {k: RUNNERS[target](variant_module(target, k)) for k in [0, *candidates]}
    ratios: dict[int, list[float]] = {k: [] for k in candidates}
    base_ms = []
    order = list(runs)
    rng = random.Random(0)
    for _ in range(rounds):
        rng.shuffle(order)
        samples: dict[int, list[float]] = {k: [] for k in order}
        for _ in range(calls):  # one call of each variant in turn: neighbours in time see the same box
            for k in order:
                t0 = time.perf_counter()
                runs[k]()
                samples[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in samples.items()}
        base_ms.append(med[0] * 1e3)
        for k in candidates:
            ratios[k].append(med[k] / med[0])
    out = {k: dict(zip(("q1", "median", "q3"), statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3))
           for k, v in ratios.items()}
    return {"base_ms": statistics.median(base_ms), "rounds": rounds, "calls": calls, "ratios": out,
            "usable_cores": len(os.sched_getaffinity(0)),
            **({"threads": motion_threads()} if target == "motion-tracking" else {})}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", required=True, help="folder of the variant modules (injection.write_variants)")
    p.add_argument("--steps", required=True, help="candidate step counts (comma-separated)")
    p.add_argument("--target", default="walk", choices=sorted(RUNNERS), help="whose variants (default walk)")
    p.add_argument("--rounds", type=int, default=30, help="rotations through every variant (default 30)")
    p.add_argument("--calls", type=int, default=20, help="timed calls per variant per round (default 20)")
    args = p.parse_args(argv)
    candidates = sorted({int(s) for s in args.steps.split(",") if s.strip()})
    if not candidates or min(candidates) < 1 or args.rounds < 1 or args.calls < 1:
        p.error("--steps must be integers >= 1, --rounds and --calls >= 1")
    if not os.path.isdir(args.variants):
        p.error(f"--variants {args.variants!r} is not a folder")
    print(json.dumps(measure(args.variants, candidates, args.rounds, args.calls, args.target)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
