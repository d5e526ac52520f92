"""Per-phase wall-clock timing of one collector step (ms); `other` is the rest of the step."""

from __future__ import annotations

import time
from contextlib import contextmanager

PHASES = ("physics", "state_read", "noise", "inputs", "update_state", "policy", "replay_add", "reset_done")


class StepTimer:
    """Accumulates ms per phase over one step; `result()` adds `other` and `total` (the step's wall time)."""

    def __init__(self) -> None:
        self.ms = dict.fromkeys(PHASES, 0.0)
        self._start = time.perf_counter()

    @contextmanager
    def phase(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] += (time.perf_counter() - t0) * 1e3

    def result(self) -> dict[str, float]:
        total = (time.perf_counter() - self._start) * 1e3
        return {**self.ms, "other": max(0.0, total - sum(self.ms.values())), "total": total}
