"""Chain length per injected size, measured on this host in ONE process, variants interleaved.

Why: the cost of the injected sqrt chain is not linear in its length, and it differs by host. 5 steps
gave x1.10 on one 2-vCPU host; on the next, 5 gave x1.031 and 16 gave x1.52 (docs/gate.md, Detection
power): short chains hide behind out-of-order execution, long ones expose their latency.
The old calibration timed each commit in its own process and fitted a line through two probes; a box
whose speed moves between processes once timed 8 steps faster than none. Here every candidate kernel
is compiled into the same process and timed in rotation, one call each in turn (base, 2, 3, ...
steps, a new random order each round), and a candidate's size is the median over rounds of its
time / the base's in that round: the same drift-cancelling idea as the gate's paired sampling.

    python scripts/gate_power_steps.py --repo CLONE_AT_BASE --steps 2,4,6,8,10,12 --rounds 30

prints one JSON line: the base's median call (ms) and, per candidate, the quartiles of its ratios.
gate_power.py runs it in a clone checked out at the base and picks, per nominal size, the candidate
whose median ratio is nearest 1 + size.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import sys
import tempfile
import time

INJECTED_NUM_ENVS = 8192  # the injected point: EnvFused.time_fused('g1_walk_flat', 8192, 1)


def _variant(folder: str, steps: int, inject, source: str) -> str:
    """A module file of the walk kernel with `steps` injected (0: the base); returns its module name."""
    name = f"gate_power_walk_{steps}"
    with open(os.path.join(folder, name + ".py"), "w") as fh:
        fh.write(inject(source, steps) if steps else source)
    return name


def _runner(module_name: str, inputs, threads: int):
    """The workload's own fused runner, with the kernel module swapped for a variant."""
    from rlperf.envs.walk import WalkWorkload

    variant = type("Variant", (WalkWorkload,), {"_fused": module_name})()
    importlib.import_module(module_name)
    run = variant.fused_runner(inputs, threads)
    run()  # compile (or load from this process's cache dir)
    return run


def measure(repo: str, candidates: list[int], rounds: int, calls: int, threads: int = 1) -> dict[int, dict]:
    """{steps: quartiles over rounds of (median call time of that variant / the base's)} in this
    process, and the base's median call (ms)."""
    sys.path.insert(0, os.path.join(repo, "src"))
    sys.path.insert(0, os.path.join(repo, "scripts"))
    from gate_power import KERNEL, inject

    from rlperf.envs import registry

    with open(os.path.join(repo, KERNEL)) as fh:
        source = fh.read()
    folder = tempfile.mkdtemp(prefix="gate-power-steps-")
    sys.path.insert(0, folder)
    from rlperf.envs.walk import WORKLOAD as workload

    inputs = workload.make_inputs(INJECTED_NUM_ENVS, registry.default_profile(workload), seed=0, noise_level=1.0)
    runs = {k: _runner(_variant(folder, k, inject, source), inputs, threads) for k in [0, *candidates]}
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
    p.add_argument("--repo", required=True, help="a checkout at the base commit")
    p.add_argument("--steps", default="2,4,6,8,10,12,16", help="candidate chain lengths (comma-separated)")
    p.add_argument("--rounds", type=int, default=30, help="rotations through every variant (default 30)")
    p.add_argument("--calls", type=int, default=20, help="timed calls per variant per round (default 20)")
    args = p.parse_args(argv)
    candidates = sorted({int(s) for s in args.steps.split(",") if s.strip()})
    if not candidates or min(candidates) < 1 or args.rounds < 1 or args.calls < 1:
        p.error("--steps must be integers >= 1, --rounds and --calls >= 1")
    os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="gate-power-numba-"))
    print(json.dumps(measure(args.repo, candidates, args.rounds, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
