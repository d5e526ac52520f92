"""One fresh process: EnvReference.time_reference('g1_walk_flat', 32768) back to back, as asv times it, with the
minor page faults of each call (getrusage): do the slow calls fault more?"""
import json
import resource
import statistics
import sys
import time

import numpy as np

from rlperf.envs import cases, harness, registry

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60
w = harness.prepare("g1_walk_flat").workload
inputs = w.make_inputs(32768, registry.default_profile(w), seed=cases.SEED, noise_level=1.0)
w.reference(inputs)
ms, faults = [], []
for _ in range(N):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = time.perf_counter()
    w.reference(inputs)
    ms.append((time.perf_counter() - t) * 1e3)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(json.dumps({"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms),
                  "p10": float(np.percentile(ms, 10)), "p90": float(np.percentile(ms, 90)),
                  "faults_median": statistics.median(faults), "faults_min": min(faults), "faults_max": max(faults),
                  "corr_ms_faults": float(np.corrcoef(ms, faults)[0, 1]) if len(set(faults)) > 1 else None,
                  "ms": ms, "faults": faults}))
