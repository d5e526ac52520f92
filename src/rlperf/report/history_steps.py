"""Markdown for the steps of a history scan (`rlperf history`, the summary's steps section): one row per
step, and a count of the series without any. It lives in `report` (not `history`) so the table is
written by `report.tables` like every other."""

from __future__ import annotations

from rlperf.history.detect import min_points
from rlperf.history.scan import SeriesSteps
from rlperf.report.tables import markdown_table

HEADERS = ["machine", "series", "benchmark", "commits", "range", "before", "after", "ratio", "direction"]


def _value(v: float, unit: str) -> str:
    if unit == "seconds":
        return f"{v * 1e3:.3g} ms"
    return f"{v:.4g}" + (f" {unit}" if unit else "")


def step_rows(scanned: list[SeriesSteps]) -> list[str]:
    """The step table, or no lines when no series has a step."""
    rows = []
    for item in scanned:
        s = item.series
        for step in item.steps:
            p = "" if step.pvalue is None else f" (p {step.pvalue:.1e})"
            rows.append([s.machine, item.label or "-", f"`{s.name}`", len(s.points),
                         f"{step.before_commit[:8]}..{step.after_commit[:8]}", _value(step.before, item.unit),
                         _value(step.after, item.unit), f"x{step.ratio:.2f}", f"{step.direction}{p}"])
    return markdown_table(HEADERS, rows, align="lllrlrrrl") if rows else []


def lines(scanned: list[SeriesSteps], method: str) -> list[str]:
    """The step table, then what was scanned: series, of which flat, and those too short to judge."""
    with_steps = sum(1 for item in scanned if item.steps)
    out = step_rows(scanned) or ["No change point in any series."]
    short = sum(1 for item in scanned if len(item.series.points) < min_points(method))
    out += ["", f"{len(scanned)} series scanned by {method}: {with_steps} with a step, "
                f"{len(scanned) - with_steps - short} without, {short} too short to judge "
                f"(fewer than {min_points(method)} commits)."]
    return out


__all__ = ["HEADERS", "lines", "step_rows"]
