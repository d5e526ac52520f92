"""Parity tolerances as data: derived from observed differences, read by the tests, the CLI and the gate.

`tolerances.json` (next to this module) is written by `scripts/derive_tolerances.py`, which runs the
fused kernels against their numpy oracles over many seeds and env counts and sets each tolerance to
FACTOR x the worst absolute difference it saw, with the run's provenance (date, command, machine, numba
and numpy versions). One definition everywhere: |fused - ref| <= atol + rtol * |ref| elementwise
(`rlperf.envs.parity.within`); terminations are exact. rtol is 0 by construction, so the gate's
absolute limit on a max-abs-diff track (`@within_tolerance`) is the same test as the elementwise one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Tolerances:
    """Parity tolerances: |got - ref| <= atol + rtol * |ref| elementwise; terminations always exact."""

    reward_rtol: float
    reward_atol: float
    log_rtol: float
    log_atol: float
    obs_rtol: float
    obs_atol: float


PATH = Path(__file__).with_name("tolerances.json")
SCHEMA, VERSION = "rlperf.tolerances", 1
FACTOR = 10.0  # tolerance = FACTOR x worst observed |fused - ref|
# float32 resolution at 1.0, the scale of these outputs: a worst difference of 0 (bitwise-equal runs on
# one machine) is taken as this, so another CPU's FMA contraction (1 ulp) does not fail parity.
RESOLUTION = float(2.0 ** -23)
OUTPUTS = ("reward", "log", "obs")  # obs covers actor, critic and extra float outputs (final-obs copy)


@lru_cache(maxsize=None)
def _document(path: str) -> dict:
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise RuntimeError(f"{path} is missing: run `python scripts/derive_tolerances.py`") from None
    if doc.get("schema") != SCHEMA or doc.get("schema_version") != VERSION:
        raise RuntimeError(f"{path}: expected schema {SCHEMA} v{VERSION}, got "
                           f"{doc.get('schema')} v{doc.get('schema_version')}")
    return doc


def document(path: Path = PATH) -> dict:
    """The whole data file: per-task records plus how they were derived."""
    return _document(str(path))


def record(task: str, path: Path = PATH) -> dict:
    """{output: {atol, rtol, worst_abs_diff, worst_at}} of `task`; a clear error if it was never derived."""
    tasks = document(path)["tasks"]
    if task not in tasks:
        raise RuntimeError(f"{path} has no tolerances for task {task!r} (has: {', '.join(sorted(tasks))}); "
                           "run `python scripts/derive_tolerances.py`")
    return tasks[task]


def load(task: str, path: Path = PATH) -> Tolerances:
    """The Tolerances of `task` from the data file."""
    outputs = record(task, path)["outputs"]
    return Tolerances(**{f"{out}_{kind}": float(outputs[out][kind]) for out in OUTPUTS for kind in ("rtol", "atol")})


def tolerance_from(worst_abs_diff: float, factor: float = FACTOR) -> float:
    """FACTOR x max(worst difference, RESOLUTION), rounded up to two significant digits."""
    from math import ceil, floor, isfinite, log10

    if not (isfinite(worst_abs_diff) and worst_abs_diff >= 0):
        raise ValueError(f"worst difference must be a finite number >= 0, got {worst_abs_diff}")
    value = factor * max(worst_abs_diff, RESOLUTION)

    step = 10.0 ** (floor(log10(value)) - 1)
    return float(f"{ceil(value / step - 1e-9) * step:.2g}")
