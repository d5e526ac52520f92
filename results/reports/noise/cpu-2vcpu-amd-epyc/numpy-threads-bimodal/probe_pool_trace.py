"""One fresh process: the numpy-threads 2-worker fill as variants._numpy_threads builds it, each work item stamped
(thread, start, end), to tell serialised items from parallel ones at half speed."""
import statistics, threading, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from rlperf.envs.noise import variants

scales = np.ones(29, np.float32)  # width does not matter for the question
out = np.zeros((8192, 29), np.float32)
rngs = [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(0).spawn(2)]
halves = [out[:4096], out[4096:]]
workers = [variants._generator_fill("uniform", h, scales, r) for h, r in zip(halves, rngs)]
pool = ThreadPoolExecutor(max_workers=2)
def stamped(w):
    def run():
        t0 = time.perf_counter(); w(); return threading.get_ident(), t0, time.perf_counter()
    return run
items = [stamped(w) for w in workers]
calls = []
for i in range(60):
    t0 = time.perf_counter()
    res = [f.result() for f in [pool.submit(x) for x in items]]
    t1 = time.perf_counter()
    if i >= 10:
        (a, s0, e0), (b, s1, e1) = res
        calls.append(((t1 - t0) * 1e3, a == b, (e0 - s0) * 1e3, (e1 - s1) * 1e3, (min(e0, e1) - max(s0, s1)) * 1e3))
ms = [c[0] for c in calls]
same = sum(c[1] for c in calls)
print(f"call {statistics.median(ms):.3f} ms; same thread for both items in {same} of {len(calls)}; item ms "
      f"{statistics.median(c[2] for c in calls):.3f}/{statistics.median(c[3] for c in calls):.3f}; overlap ms "
      f"{statistics.median(c[4] for c in calls):.3f}; threads {threading.active_count()}")
