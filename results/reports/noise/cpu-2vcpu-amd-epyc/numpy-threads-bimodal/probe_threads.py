import os, sys, time, threading
import numpy as np
from rlperf.envs.noise import variants  # the benchmark's import
def threads():
    out = {}
    for t in os.listdir('/proc/self/task'):
        st = open(f'/proc/self/task/{t}/stat').read().rsplit(')', 1)[1].split()
        out[int(t)] = (int(st[11]) + int(st[12]), open(f'/proc/self/task/{t}/comm').read().strip())
    return out
a = threads(); time.sleep(1.0); b = threads()
print({t: (b[t][1], b[t][0] - a[t][0]) for t in b if t in a}, "pid", os.getpid(),
      "modules:", [m for m in ('torch', 'numba', 'cupy', 'scipy') if m in sys.modules])
