"""The collector, imported lazily (it lives in `rlperf.e2e.collector`, with MuJoCo), and its A/B.

The import is lazy so `rlperf e2e --help`, the asv skips and the tests never need MuJoCo; tests
replace `load_collector_class` with a fake that implements the same interface.
"""

from __future__ import annotations

import importlib.util

from rlperf.e2e.loop.iteration import COLLECTOR_PHASES

COLLECTOR_MODULE = "rlperf.e2e.collector"
PHYSICS = ("mujoco", "recorded")
KERNELS = ("fused", "numpy")


def collector_missing_reason() -> str | None:
    """Why the real collector cannot be used here, else None, checked without importing MuJoCo.

    Both of its physics need the G1 model ("recorded" records its states with MuJoCo first), so a missing
    mujoco or asset package is a reason too. Asking that imports the collector package (its `assets`
    module, about 0.1 s with numpy), but only once the package is known to exist."""
    try:
        found = importlib.util.find_spec(COLLECTOR_MODULE) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        return f"{COLLECTOR_MODULE} is not installed (the MuJoCo collector); nothing to drive"
    from rlperf.e2e.collector.assets import model_missing_reason  # noqa: PLC0415 - imports no MuJoCo

    return model_missing_reason()


def load_collector_class():
    """`rlperf.e2e.collector.Collector`: (workload, *, num_envs, physics, kernel, threads, seed,
    replay_writer, policy) with step(), set_policy_weights(state_dict) and prefill(writer, rows)."""
    from rlperf.e2e.collector import Collector  # noqa: PLC0415 - lazy on purpose

    return Collector


def collector_step_breakdown(collector, *, steps: int, warmup: int) -> dict[str, list[float]]:
    """Per-phase ms samples of `steps` collector steps alone (after `warmup` untimed ones)."""
    for _ in range(warmup):
        collector.step()
    samples: dict[str, list[float]] = {name: [] for name in COLLECTOR_PHASES}
    for _ in range(steps):
        for name, ms in collector.step().items():
            samples.setdefault(name, []).append(float(ms))
    return {k: v for k, v in samples.items() if v}
