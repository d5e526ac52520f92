"""update_state through the env packages' public entry points: the fused runner, or the numpy reference.

Why both: the kernel A/B of issue 8 runs the same collector with either, so the fused kernel's speedup
inside a real step is measured in the same run.
"""

from __future__ import annotations

from typing import Any

from rlperf.envs import registry
from rlperf.envs.base import EnvOutputs

KERNELS = ("fused", "numpy")
_COMPILED: set[str] = set()  # tasks whose fused kernel this process has run (Numba compiles on the first run)


def first_use(task: str, kernel: str) -> bool:
    """True once per task for the fused kernel: the call that compiles (or loads from cache), worth announcing."""
    if kernel != "fused" or task in _COMPILED:
        return False
    _COMPILED.add(task)
    return True


class KernelRunner:
    """Runs update_state on one preallocated inputs object; the inputs are refilled in place between calls."""

    def __init__(self, task: str, inputs: Any, kernel: str, numba_threads: int):
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}; valid: {', '.join(KERNELS)}")
        self.workload = registry.get(task)
        self.inputs = inputs
        self.kernel = kernel
        if kernel == "fused":
            from rlperf.envs.threads import max_numba_threads

            self._run = self.workload.fused_runner(inputs, min(numba_threads, max_numba_threads()))
        else:
            self._run = lambda: self.workload.reference(inputs)

    def __call__(self) -> EnvOutputs:
        return self._run()
