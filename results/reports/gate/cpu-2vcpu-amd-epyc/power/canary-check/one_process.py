"""One fresh process: alternate the walk kernel and canaries, print medians (json)."""
import json, statistics, sys, time
import numpy as np
from numba import njit, prange, set_num_threads
from rlperf.envs import harness, registry

threads = int(sys.argv[1]); task = sys.argv[2] if len(sys.argv) > 2 else "g1_walk_flat"

@njit(cache=True, fastmath=False, parallel=True)
def compute_canary(x, reps):
    n = x.shape[0]
    acc = np.zeros(n)
    for i in prange(n):
        v = x[i]
        for r in range(reps):
            v = np.sqrt(v + 1.0) * 1.0000001
        acc[i] = v
    return acc

@njit(cache=True, parallel=True)
def stream_canary(src, dst):
    for i in prange(src.shape[0]):
        dst[i] = src[i] * 1.5 + 1.0

prep = harness.prepare(task); w = prep.workload
inp = w.make_inputs(8192, registry.default_profile(w), seed=0, noise_level=1.0)
kernel = w.fused_runner(inp, threads)
set_num_threads(threads)
x = np.random.default_rng(0).random(8192)
src = np.random.default_rng(1).random(14_000_000 // 8); dst = np.empty_like(src)
fns = {"kernel": kernel, "compute": lambda: compute_canary(x, 40), "stream": lambda: stream_canary(src, dst)}
for f in fns.values():
    for _ in range(3): f()
t = {k: [] for k in fns}
for r in range(25):
    for k, f in fns.items():
        t0 = time.perf_counter(); f(); t[k].append(time.perf_counter() - t0)
med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
ratio = {c: statistics.median(a / b for a, b in zip(t["kernel"], t[c])) for c in ("compute", "stream")}
print(json.dumps({"med_ms": med, "ratio": ratio}))
