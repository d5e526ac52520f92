"""Change points of every series, by either method, as direction-aware steps with commit ranges.

A step is named as asv names it: the last commit measured at the old level and the first at the new
one (`before..after`); the code change lies in that range. Its size is the ratio of the medians of
the two levels (after / before, each level up to the neighbouring change point), read against the
benchmark's declared direction (benchmarks.json `direction`: lower, higher or tolerance; asv's default
is lower).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from rlperf.history import asv_steps, edivisive
from rlperf.history.series import Series

METHODS = ("edivisive", "asv")
DEFAULT_METHOD = "edivisive"
DEFAULT_PVALUE = 0.001  # Hunter/Otava's default significance
MIN_SIZE = 3  # values on each side of an e-divisive split (the t-test needs a spread on each side)


@dataclass(frozen=True)
class Step:
    """One change point of one series."""

    method: str
    index: int  # position of the first value at the new level
    before_commit: str
    after_commit: str
    before: float  # median of the level before
    after: float  # median of the level after
    direction: str  # regression, improvement or changed (tolerance metrics have no better side)
    pvalue: float | None = None

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else float("inf")


def min_points(method: str) -> int:
    """Fewest commits in which a method can place a step at all."""
    return 2 * MIN_SIZE if method == "edivisive" else 2


def classify(ratio: float, direction: str | None) -> str:
    """regression / improvement for a ratio after/before, given the benchmark's better side."""
    if direction == "tolerance":
        return "changed"
    worse = ratio < 1 if direction == "higher" else ratio > 1
    return "regression" if worse else "improvement"


def _levels(values: list[float], cuts: list[int]) -> list[float]:
    bounds = [0, *cuts, len(values)]
    return [statistics.median(values[a:b]) for a, b in zip(bounds, bounds[1:])]


def find_steps(series: Series, method: str = DEFAULT_METHOD, threshold: float = asv_steps.DEFAULT_THRESHOLD,
               pvalue: float = DEFAULT_PVALUE, direction: str | None = None) -> list[Step]:
    """Steps of one series. Both methods drop a change smaller than `threshold` (relative, as asv's
    regressions_thresholds); e-divisive also needs p < `pvalue` and MIN_SIZE values on each side."""
    values = series.values
    if method == "asv":
        cuts = [i for i, _, _ in asv_steps.change_points(values, [p.weight for p in series.points], threshold)]
        pvalues: list[float | None] = [None] * len(cuts)
    elif method == "edivisive":
        splits = edivisive.change_points(values, max_pvalue=pvalue, min_size=MIN_SIZE)
        cuts, pvalues = [s.index for s in splits], [s.pvalue for s in splits]
    else:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    levels = _levels(values, cuts)
    steps = []
    for k, (cut, p) in enumerate(zip(cuts, pvalues)):
        before, after = levels[k], levels[k + 1]
        ratio = after / before if before else float("inf")
        if abs(ratio - 1.0) <= threshold:
            continue
        steps.append(Step(method, cut, series.points[cut - 1].commit, series.points[cut].commit, before, after,
                          classify(ratio, direction), p))
    return steps


__all__ = ["DEFAULT_METHOD", "DEFAULT_PVALUE", "METHODS", "MIN_SIZE", "Step", "classify", "find_steps", "min_points"]
