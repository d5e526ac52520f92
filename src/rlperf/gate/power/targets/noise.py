"""--target noise: one more elementwise pass over the first `steps` rows of the counter-based noise
kernel's output (`fill_uniform`), each value multiplied by `1.0 + x * 0.0` (exactly 1 for the finite
values it draws; the kernel has no fastmath, so LLVM keeps it): the shape of a clip or re-scale added
after the draw. Not a sqrt chain per env as in the env kernels: the kernel draws 64 values per env in
about 12 ns here, so even one dependent sqrt per env is +60 %; a pass over rows grades finely.

The point, `NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)`: the counter kernel is the
project's own generator (the numpy variants change with numpy, not with a PR), uniform is motion tracking's
own distribution, 32,768 envs is the suite's larger size (the larger call, less at the clock's resolution),
and 1 thread is what one pinned core runs."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

KERNEL = "src/rlperf/envs/noise/counter.py"
DOC = '    """out[i, k] = U(-1, 1)(seed, step, i, k) * scales[k]: the standalone variant of the benchmark."""\n'
# the end of fill_uniform's loop: fill_normal's loop ends alike, so the anchor takes the next def's head
END = ("            out[i, k] = uniform_at(key, k) * scales[k]\n\n\n"
       "@njit(parallel=True, cache=True, nogil=True)\ndef fill_normal(")
BENCH = r"NoiseGeneration\.track_ms\('counter-numba', 'uniform', 32768, 1\)"
INJECTED = r"'counter-numba', 'uniform'"


def inject(source: str, steps: int) -> str:
    """fill_uniform with one more pass over its first `steps` rows, every value multiplied by exactly 1."""
    chain.check(source, KERNEL, END)
    head, tail = END.split("\n\n\n", 1)
    extra = (f"    for i in range(min({steps}, n)):  # {chain.MARK}\n"
             "        for k in range(width):\n"
             "            out[i, k] = out[i, k] * (1.0 + out[i, k] * 0.0)\n")
    return source.replace(END, head + "\n" + extra + "\n\n" + tail)


def null_edit(source: str) -> str:
    chain.check(source, KERNEL, DOC)
    return source.replace(DOC, DOC + "    " + chain.NULL + "\n")


TARGET = Target("noise", KERNEL, inject, null_edit, BENCH, INJECTED, "output rows passed over again",
                candidates=(1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384))
