"""One fresh process: EnvReference.time_reference('g1_walk_flat', 32768) as the benchmark builds it, interleaved round
by round with a 64 MiB numpy copy (memory bandwidth) and a CPU-only canary (dependent integer work), with /proc/stat's
steal over each round: does the reference's spread follow the memory, the CPU, or neither?"""
import json
import statistics
import sys
import time

import numpy as np

from rlperf.envs import harness, registry
from rlperf.envs import cases

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
prepared = harness.prepare("g1_walk_flat")
w = prepared.workload
inputs = w.make_inputs(32768, registry.default_profile(w), seed=cases.SEED, noise_level=1.0)
src = np.ones(64 * 2**20 // 8)
dst = np.empty_like(src)


def steal():
    return sum(int(l.split()[8]) for l in open('/proc/stat') if l.startswith('cpu') and not l.startswith('cpu '))


def canary():
    x = 1
    for i in range(200_000):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def timed(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1e3


for _ in range(3):
    w.reference(inputs), np.copyto(dst, src)
rows = []
for r in range(ROUNDS):
    s0 = steal()
    ref = timed(lambda: w.reference(inputs))
    cp = timed(lambda: np.copyto(dst, src))
    can = timed(canary)
    rows.append({"ref_ms": ref, "copy_ms": cp, "canary_ms": can, "steal_jiffies": steal() - s0})
ref = [r["ref_ms"] for r in rows]
cp = [r["copy_ms"] for r in rows]
can = [r["canary_ms"] for r in rows]
corr = lambda a, b: float(np.corrcoef(a, b)[0, 1])
print(json.dumps({"ref_median": statistics.median(ref), "ref_min": min(ref), "ref_max": max(ref),
                  "copy_median": statistics.median(cp), "copy_min": min(cp), "copy_max": max(cp),
                  "canary_median": statistics.median(can), "canary_min": min(can), "canary_max": max(can),
                  "corr_ref_copy": corr(ref, cp), "corr_ref_canary": corr(ref, can),
                  "steal_total": sum(r["steal_jiffies"] for r in rows), "rows": rows}))
