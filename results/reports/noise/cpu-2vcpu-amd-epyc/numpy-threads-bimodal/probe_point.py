"""One fresh process: the asv point NoiseGeneration.track_ms('numpy-threads', 'uniform', 8192, 2) as the benchmark
times it (time_case, 20 iters after 5 warmups), with /proc/stat's per-CPU deltas over the timing."""
import statistics
from rlperf.envs.noise import cases
from rlperf.envs.noise.measure import time_case

def cpu():
    return {l.split()[0]: list(map(int, l.split()[1:])) for l in open('/proc/stat') if l.startswith('cpu')}

case = cases.NoiseCase("g1_motion_tracking", "numpy-threads", "uniform", 8192, 2)
a = cpu()
s = time_case(case, iters=cases.ITERS, warmup=cases.WARMUP, seed=cases.SEED)
b = cpu()
d = {k: [y - x for x, y in zip(a[k], b[k])] for k in ('cpu0', 'cpu1')}
# /proc/stat: user nice system idle iowait irq softirq steal (jiffies)
print(f"{statistics.median(s):.3f} ms (min {min(s):.3f} max {max(s):.3f}) | cpu0 user {d['cpu0'][0]} sys {d['cpu0'][2]} "
      f"idle {d['cpu0'][3]} steal {d['cpu0'][7]} | cpu1 user {d['cpu1'][0]} sys {d['cpu1'][2]} idle {d['cpu1'][3]} "
      f"steal {d['cpu1'][7]}")
