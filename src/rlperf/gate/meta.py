"""Direction and tolerance declared on the benchmark itself, where the metric is defined.

asv_runner copies a benchmark function's own non-callable attributes into `benchmarks.json`, so
the gate reads them back from the results folder with no import of the benchmark code:

    class EnvKernels:
        @higher_is_better
        def track_speedup(self, task): ...          # numpy ms / numba ms

        @within_tolerance(1e-5)                     # or per parameter value: {"g1_walk_flat": 5e-5, ...}
        def track_reward_max_abs_diff(self, task): ...

The attributes live on the function (class attributes are not exported by asv_runner).
"""

from __future__ import annotations

DIRECTIONS = ("lower", "higher", "tolerance")


def lower_is_better(func):
    """asv's default: times, bytes, costs. Explicit only for readability."""
    func.direction = "lower"
    return func


def higher_is_better(func):
    """Speedups and other ratios where a rise is good; the gate flags a fall beyond the factor."""
    func.direction = "higher"
    return func


def within_tolerance(atol):
    """Parity metrics (max |diff|, mismatch counts): head fails when |value| exceeds `atol`.

    `atol` is a number, or a mapping from a parameter value (e.g. the task) to a number, for
    tolerances that differ per point; entries that are None (a task that cannot load) are dropped.
    """
    if isinstance(atol, dict):
        atol = {str(k): v for k, v in atol.items() if v is not None}
        values = list(atol.values())
    else:
        values = [atol]
    if not values or not all(isinstance(v, (int, float)) and v >= 0 for v in values):
        raise ValueError(f"tolerance must be >= 0 (or a mapping to such numbers), got {atol!r}")

    def mark(func):
        func.direction = "tolerance"
        func.tolerance = {k: float(v) for k, v in atol.items()} if isinstance(atol, dict) else float(atol)
        return func

    return mark


__all__ = ["DIRECTIONS", "higher_is_better", "lower_is_better", "within_tolerance"]
