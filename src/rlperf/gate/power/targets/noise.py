"""--target noise: dependent sqrt per env in the counter-based noise kernel (`fill_uniform`'s env loop),
each value multiplied by exactly 1 (`(1.0 + spin * 0.0)`: the kernel has no fastmath, so it stays).

The point, `NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)`: the counter kernel is the
project's own generator (the numpy variants change with numpy, not with a PR), uniform is motion tracking's
own distribution, 32,768 envs is the suite's larger size (milliseconds per call, so one call is not at the
clock's resolution), and 1 thread is what one pinned core runs."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

KERNEL = "src/rlperf/envs/noise/counter.py"
# fill_uniform's loop only: fill_normal's loop has the same key line, so the anchor takes its docstring
ANCHOR = ('    """out[i, k] = U(-1, 1)(seed, step, i, k) * scales[k]: the standalone variant of the benchmark."""\n'
          "    n, width = out.shape\n    for i in prange(n):\n")
TERM = "            out[i, k] = uniform_at(key, k) * scales[k]\n"
FOLDED = "            out[i, k] = uniform_at(key, k) * scales[k] * (1.0 + spin * 0.0)\n"
BENCH = r"NoiseGeneration\.track_ms\('counter-numba', 'uniform', 32768, 1\)"
INJECTED = r"'counter-numba', 'uniform'"


def inject(source: str, steps: int) -> str:
    """fill_uniform with `steps` dependent sqrt per env, every value multiplied by exactly 1."""
    chain.check(source, KERNEL, ANCHOR, TERM)
    return source.replace(ANCHOR, ANCHOR + chain.lines(8, steps)).replace(TERM, FOLDED)


def null_edit(source: str) -> str:
    chain.check(source, KERNEL, ANCHOR)
    return source.replace(ANCHOR, ANCHOR + "        " + chain.NULL + "\n")


TARGET = Target("noise", KERNEL, inject, null_edit, BENCH, INJECTED, "dependent sqrt per env",
                candidates=(1, 2, 3, 4, 6, 8, 12, 16))
