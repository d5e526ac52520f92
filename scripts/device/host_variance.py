"""Device probe: is the 1.5-1.9x spread of 1-thread fused times on the H200 host per process, per
allocation or within a run? One process, the motion-tracking and probe kernels at 8,192 envs on 1 thread:
three fresh input allocations, each timed in 3 blocks of 15 calls (min and median per block), with the
CPU the process ran on. Run it in several processes to see the spread between them."""

import json
import os
import sys
import time

from rlperf.envs import harness, registry
from rlperf.measure.timing import time_wall

def _cpu() -> int:
    """The CPU this thread last ran on (field 39 of /proc/self/stat)."""
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


out = {"pid": os.getpid(), "cpus_allowed": len(os.sched_getaffinity(0))}
for task, profile in (("g1_motion_tracking", "sac_default"), ("probe", "default")):
    prep = harness.prepare(task)
    w = prep.workload
    allocs = []
    for seed in range(3):
        inputs = w.make_inputs(8192, profile, seed=seed)
        run = w.fused_runner(inputs, 1)
        from rlperf.envs import threads
        threads.apply_budget(1)
        blocks = []
        for _ in range(3):
            s = time_wall(run, warmup=2, repeat=15)
            blocks.append([round(min(s), 3), round(sorted(s)[len(s) // 2], 3)])
        allocs.append({"seed": seed, "blocks_min_median_ms": blocks, "cpu": _cpu()})
        del inputs, run
    out[task] = allocs
print(json.dumps(out), flush=True)
