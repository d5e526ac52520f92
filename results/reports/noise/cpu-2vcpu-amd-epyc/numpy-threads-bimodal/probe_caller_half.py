"""The same two halves, but the calling thread fills one itself and a 1-worker pool the other."""
import statistics, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from rlperf.envs.noise import variants

scales = np.ones(29, np.float32)
out = np.zeros((8192, 29), np.float32)
rngs = [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(0).spawn(2)]
w0, w1 = [variants._generator_fill("uniform", h, scales, r) for h, r in zip([out[:4096], out[4096:]], rngs)]
pool = ThreadPoolExecutor(max_workers=1)
ms = []
for i in range(60):
    t0 = time.perf_counter()
    f = pool.submit(w1); w0(); f.result()
    if i >= 10:
        ms.append((time.perf_counter() - t0) * 1e3)
print(f"caller-runs-one: call {statistics.median(ms):.3f} ms (min {min(ms):.3f})")
import os
cpus = {}
for k in range(300):
    f = pool.submit(w1); w0(); f.result()
    for tid in os.listdir('/proc/self/task'):
        try:
            st = open(f'/proc/self/task/{tid}/stat').read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        cpus.setdefault(tid, []).append(int(st[36]))
import threading
wid = pool.submit(threading.get_native_id).result()
names = {t: ("main" if int(t) == os.getpid() else "worker" if int(t) == wid else "other") for t in cpus}
print("  last CPU per thread over 300 calls:", {names[t]: (c.count(0), c.count(1)) for t, c in cpus.items()},
      "affinity", sorted(os.sched_getaffinity(0)), "switchinterval", __import__('sys').getswitchinterval())
