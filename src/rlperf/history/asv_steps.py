"""asv's own step detection (asv.step_detect), as `asv publish` runs it for the regressions page.

`asv publish` fits a piecewise-constant function to each graph line (detect_steps, weights 2 / CI
width) and lists a regression where a later level is worse than an earlier one by more than
max(segment errors, threshold x level) (detect_regressions; threshold from asv.conf.json's
`regressions_thresholds`, default 0.05). Every metric is lower-is-better to asv, and an improvement
is never listed there. change_points() applies the same size rule to every level boundary, both ways.
"""

from __future__ import annotations

import re

from asv import step_detect

DEFAULT_THRESHOLD = 0.05  # asv's own, when no regressions_thresholds regex matches


def threshold_for(name: str, thresholds: dict[str, float] | None) -> float:
    """asv's rule: the largest threshold whose regex matches the point's name from its start."""
    matches = [float(t) for rx, t in (thresholds or {}).items() if re.match(rx, name)]
    return max(matches) if matches else DEFAULT_THRESHOLD


def _steps(values, weights):
    return step_detect.detect_steps(list(values), None if weights is None else list(weights))


def change_points(values, weights=None, threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, float, float]]:
    """(index of the first value of the new level, level before, level after) for each boundary of
    asv's fit whose jump exceeds max(error of either side, threshold x level before)."""
    steps = _steps(values, weights)
    out = []
    for (_, _, v0, _, e0), (left, _, v1, _, e1) in zip(steps, steps[1:]):
        if abs(v1 - v0) > max(e0, e1, threshold * v0):
            out.append((left, v0, v1))
    return out


def regressions(values, weights=None, threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, float, float]]:
    """What the regressions page lists for one line: (index of the first worse value, level before,
    best level after), from asv's detect_regressions."""
    _, _, jumps = step_detect.detect_regressions(_steps(values, weights), threshold)
    return [(after, before_v, best_after) for _, after, before_v, best_after in (jumps or [])]


__all__ = ["DEFAULT_THRESHOLD", "change_points", "regressions", "threshold_for"]
