"""Every series of an asv results folder with its steps: what `rlperf history` and SUMMARY.md print.

Inputs besides the result files: asv.conf.json (results_dir, `regressions_thresholds`, the same
thresholds `asv publish` uses) and the results folder's benchmarks.json (each benchmark's `direction`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from asv import util as asv_util

from rlperf.errors import UsageError, choice_error
from rlperf.history import asv_steps
from rlperf.history.detect import DEFAULT_METHOD, DEFAULT_PVALUE, Step, find_steps
from rlperf.history.series import Series, load_series, machines, varying_facets


@dataclass(frozen=True)
class AsvSettings:
    results_dir: Path
    thresholds: dict[str, float]
    # regexes whose regressions_first_commits entry is null: asv publish lists no regression for them
    # (benchmarks whose direction asv cannot read: speedups, parity tolerances, rates)
    page_skips: tuple[str, ...] = ()

    def on_regressions_page(self, name: str) -> bool:
        """Whether asv publish looks for regressions of point `name` at all (asv's rule: re.match)."""
        return not any(re.match(rx, name) for rx in self.page_skips)


@dataclass(frozen=True)
class SeriesSteps:
    series: Series
    label: str  # the facets that tell this series from the machine's others, e.g. cpu_flags=ecfefe0f
    unit: str  # benchmarks.json's unit ("seconds" for time_ benchmarks), "" when unknown
    threshold: float
    steps: list[Step]


def read_asv_conf(path: Path) -> AsvSettings:
    """results_dir (relative to the config file, as asv resolves it) and regressions_thresholds."""
    try:
        conf = asv_util.load_json(str(path), js_comments=True)
    except (OSError, asv_util.UserError, ValueError) as exc:
        raise UsageError(f"cannot read asv config {path}: {exc}") from None
    thresholds = conf.get("regressions_thresholds") or {}
    if not isinstance(thresholds, dict) or not all(isinstance(v, (int, float)) for v in thresholds.values()):
        raise UsageError(f"{path}: regressions_thresholds must map regexes to numbers, got {thresholds!r}")
    first = conf.get("regressions_first_commits") or {}
    if not isinstance(first, dict):
        raise UsageError(f"{path}: regressions_first_commits must map regexes to commits or null, got {first!r}")
    return AsvSettings(path.parent / conf.get("results_dir", "results"), {str(k): float(v) for k, v in thresholds.items()},
                       tuple(str(k) for k, v in first.items() if v is None))


def read_benchmarks(results_dir: Path) -> dict[str, dict]:
    """benchmark -> its benchmarks.json entry (direction, unit); {} when the file is absent."""
    path = results_dir / "benchmarks.json"
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"unreadable {path}: {exc}") from None
    return {k: v for k, v in doc.items() if isinstance(v, dict)} if isinstance(doc, dict) else {}


# Facets that name a series when they differ within a machine; the rest (os, ram, ...) follow the host.
LABEL_FACETS = ("cpu_flags", "gpu", "python", "env")


def _label(series: Series, keys: list[str]) -> str:
    shown = [k for k in LABEL_FACETS if k in keys]
    if "cpu_flags" in shown and "python" in shown and "env" in shown:
        shown.remove("env")  # asv's env name is derived from the interpreter path
    return ", ".join(f"{k}={series.facet(k, '-')}" for k in shown)


def scan(results_dir: Path, thresholds: dict[str, float] | None = None, method: str = DEFAULT_METHOD,
         pvalue: float = DEFAULT_PVALUE, machine: str | None = None, bench: str | None = None) -> list[SeriesSteps]:
    """All series (of `machine`, matching the `bench` regex) with their steps, machine by machine."""
    if not results_dir.is_dir():
        raise UsageError(f"no asv results folder {results_dir} (give --results-dir, or run from the repository root)")
    names = machines(results_dir)
    if not names:
        raise UsageError(f"{results_dir} holds no machine folder (a folder with machine.json)")
    if machine is not None and machine not in names:
        raise choice_error("machine", machine, names, f"in {results_dir}")
    try:
        pattern = re.compile(bench) if bench else None
    except re.error as exc:
        raise UsageError(f"--bench {bench!r} is not a valid regular expression: {exc}") from None
    meta = read_benchmarks(results_dir)
    out = []
    for name in [machine] if machine else names:
        series = load_series(results_dir, name)
        keys = varying_facets(series)
        for s in series:
            if pattern and not pattern.search(s.name):
                continue
            threshold = asv_steps.threshold_for(s.name, thresholds)
            info = meta.get(s.benchmark, {})
            direction = info.get("direction") if isinstance(info.get("direction"), str) else None
            steps = find_steps(s, method, threshold, pvalue, direction)
            out.append(SeriesSteps(s, _label(s, keys), str(info.get("unit") or ""), threshold, steps))
    return out


__all__ = ["AsvSettings", "SeriesSteps", "read_asv_conf", "read_benchmarks", "scan"]
