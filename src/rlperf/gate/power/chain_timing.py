"""Chain length per injected size, measured on this host in ONE process, variants interleaved.

Why: the cost of the injected sqrt chain is not linear in its length, and it differs by host. 5 steps
gave x1.10 on one 2-vCPU host; on the next, 5 gave x1.031 and 16 gave x1.52 (docs/gate.md, Detection
power): short chains hide behind out-of-order execution, long ones expose their latency.
An older calibration timed each commit in its own process and fitted a line through two probes; a box
whose speed moves between processes once timed 8 steps faster than none. Here every candidate kernel
is compiled into the same process and timed in rotation, one call each in turn (base, 2, 3, ...
steps, a new random order each round), and a candidate's size is the median over rounds of its
time / the base's in that round: the same drift-cancelling idea as the gate's paired sampling.

injection.calibrate writes the variants (VARIANT_PREFIX + steps, 0 = the base) into a folder and runs
this file BY PATH in a fresh process whose PYTHONPATH is the clone's src, so the clone's own workload
times them; it prints one JSON line: the base's median call (ms) and the quartiles of each candidate's
ratios. This module therefore imports nothing of rlperf but rlperf.envs, and that inside measure().
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

INJECTED_NUM_ENVS = 8192  # the injected point: EnvFused.time_fused('g1_walk_flat', 8192, 1)
VARIANT_PREFIX = "gate_power_walk_"


def _runner(module_name: str, inputs, threads: int):
    """The workload's own fused runner, with the kernel module swapped for a variant."""
    from rlperf.envs.walk import WalkWorkload

    variant = type("Variant", (WalkWorkload,), {"_fused": module_name})()
    importlib.import_module(module_name)
    run = variant.fused_runner(inputs, threads)
    run()  # compile (or load from this process's cache dir)
    return run


def measure(variants: str, candidates: list[int], rounds: int, calls: int, threads: int = 1) -> dict:
    """{steps: quartiles over rounds of (median call time of that variant / the base's)} in this
    process, and the base's median call (ms); `variants` holds the module files (write_variants)."""
    from rlperf.envs import registry
    from rlperf.envs.walk import WORKLOAD as workload

    if variants not in sys.path:
        sys.path.insert(0, variants)
    inputs = workload.make_inputs(INJECTED_NUM_ENVS, registry.default_profile(workload), seed=0, noise_level=1.0)
    runs = {k: _runner(f"{VARIANT_PREFIX}{k}", inputs, threads) for k in [0, *candidates]}
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
    return {"base_ms": statistics.median(base_ms), "rounds": rounds, "calls": calls, "ratios": out}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", required=True, help="folder of the variant modules (injection.write_variants)")
    p.add_argument("--steps", required=True, help="candidate chain lengths (comma-separated)")
    p.add_argument("--rounds", type=int, default=30, help="rotations through every variant (default 30)")
    p.add_argument("--calls", type=int, default=20, help="timed calls per variant per round (default 20)")
    args = p.parse_args(argv)
    candidates = sorted({int(s) for s in args.steps.split(",") if s.strip()})
    if not candidates or min(candidates) < 1 or args.rounds < 1 or args.calls < 1:
        p.error("--steps must be integers >= 1, --rounds and --calls >= 1")
    if not os.path.isdir(args.variants):
        p.error(f"--variants {args.variants!r} is not a folder")
    print(json.dumps(measure(args.variants, candidates, args.rounds, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
