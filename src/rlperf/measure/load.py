"""Is the machine busy? A timing taken while other work holds the cores is not the code's own speed."""

from __future__ import annotations

import os


def busy_warning(cores: int | None = None, load: float | None = None) -> str | None:
    """A warning when the 1-minute load average is above the core count, else None.

    Why: on a 2-core box at load 41 a kernel read 0.05x of its numpy reference; the figure was the
    neighbours', not the kernel's. The run still goes on: the warning travels with it."""
    cores = cores or os.cpu_count() or 1
    load = os.getloadavg()[0] if load is None else load
    if load <= cores:
        return None
    return (f"load average {load:.1f} is above this machine's {cores} cores: other work shares the CPU, "
            "so these timings are slower and noisier than the code alone (re-run on a quiet machine)")
