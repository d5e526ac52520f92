"""Markdown for the steps of a scan: one row per step, and a count of the series without any."""

from __future__ import annotations

from rlperf.history.detect import min_points
from rlperf.history.scan import SeriesSteps


def _value(v: float, unit: str) -> str:
    if unit == "seconds":
        return f"{v * 1e3:.3g} ms"
    return f"{v:.4g}" + (f" {unit}" if unit else "")


def step_rows(scanned: list[SeriesSteps]) -> list[str]:
    header = ["| machine | series | benchmark | commits | range | before | after | ratio | direction |",
              "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for item in scanned:
        s = item.series
        for step in item.steps:
            p = "" if step.pvalue is None else f" (p {step.pvalue:.1e})"
            rows.append(f"| {s.machine} | {item.label or '-'} | `{s.name}` | {len(s.points)} | "
                        f"{step.before_commit[:8]}..{step.after_commit[:8]} | {_value(step.before, item.unit)} | "
                        f"{_value(step.after, item.unit)} | x{step.ratio:.2f} | {step.direction}{p} |")
    return header + rows if rows else []


def lines(scanned: list[SeriesSteps], method: str) -> list[str]:
    """The step table, then what was scanned: series, of which flat, and those too short to judge."""
    with_steps = sum(1 for item in scanned if item.steps)
    out = step_rows(scanned) or ["No change point in any series."]
    short = sum(1 for item in scanned if len(item.series.points) < min_points(method))
    out += ["", f"{len(scanned)} series scanned by {method}: {with_steps} with a step, "
                f"{len(scanned) - with_steps - short} without, {short} too short to judge "
                f"(fewer than {min_points(method)} commits)."]
    return out


__all__ = ["lines", "step_rows"]
