"""One process, one kernel, two independently allocated input sets A and B: how much does the box drift
over seconds, and how much of it does timing A and B call by call cancel? (docs/gate.md, Paired sampling)

    OMP_NUM_THREADS=1 python drift_check.py THREADS TASK NUM_ENVS SECONDS ORDER   # ORDER: ab | abba

ab:   A B A B ...; pairs (A_i, B_i).
abba: A B B A A B B A ...; the positional effect = median of (second of a pair / first of a pair).
Prints one JSON line: medians, the range and CV of A's 20-call block medians, and the CV of the
per-block A/B ratio.
"""
import json
import statistics
import sys
import time

from numba import set_num_threads

from rlperf.envs import harness, registry

threads, task, n, seconds, order = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
w = harness.prepare(task).workload
ka = w.fused_runner(w.make_inputs(n, registry.default_profile(w), seed=0, noise_level=1.0), threads)
kb = w.fused_runner(w.make_inputs(n, registry.default_profile(w), seed=0, noise_level=1.0), threads)
set_num_threads(threads)
for _ in range(5):
    ka()
    kb()


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


ta, tb, second_over_first = [], [], []
start, i = time.perf_counter(), 0
while time.perf_counter() - start < seconds:
    if order == "abba" and i % 2 == 1:
        b = timed(kb)
        a = timed(ka)
        second_over_first.append(a / b)
    else:
        a = timed(ka)
        b = timed(kb)
        second_over_first.append(b / a)
    ta.append(a)
    tb.append(b)
    i += 1
B = 20
blocks = [(statistics.median(ta[j:j + B]), statistics.median(tb[j:j + B])) for j in range(0, len(ta) - B + 1, B)]
a_blocks = [x for x, _ in blocks]
ratios = [x / y for x, y in blocks]
cv = lambda v: statistics.pstdev(v) / statistics.mean(v)  # noqa: E731
print(json.dumps({"order": order, "threads": threads, "task": task, "num_envs": n, "pairs": len(ta),
                  "median_a_ms": statistics.median(ta) * 1e3, "median_b_ms": statistics.median(tb) * 1e3,
                  "block_a_min_max_ms": [min(a_blocks) * 1e3, max(a_blocks) * 1e3], "cv_block_a": cv(a_blocks),
                  "cv_block_ratio_a_over_b": cv(ratios), "median_block_ratio_a_over_b": statistics.median(ratios),
                  "median_second_over_first": statistics.median(second_over_first)}))
