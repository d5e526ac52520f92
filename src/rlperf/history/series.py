"""asv's results folder -> one value series per benchmark point, machine and host, oldest commit first.

The raw result JSON is read directly (not through asv's loader, not against benchmarks.json), so a
result whose benchmark `version` is stale still counts: the history is about values per commit. A
series is keyed, as `asv publish` keys its graph lines, by every result param (machine facts such as
`cpu_flags`, the Python identity) plus the environment: a host change starts a new series and is
never read as a step of the code.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from rlperf.errors import UsageError

# asv's own name for the weight of a point: 2 / width of its 99% confidence interval (asv._stats)
CI_COLUMNS = ("stats_ci_99_a", "stats_ci_99_b")


@dataclass(frozen=True)
class Point:
    """One measured value of a series: the commit, its date (ms, as asv stores it), value and weight."""

    commit: str
    date: int
    value: float
    weight: float | None


@dataclass
class Series:
    """Values of one benchmark point on one machine, one environment and one host, in commit order."""

    machine: str
    benchmark: str  # asv key, e.g. bench_env.EnvFused.time_fused
    params: tuple[str, ...]  # asv's repr of each parameter value
    facets: tuple[tuple[str, str], ...]  # the result params + env name that split asv's graph lines
    points: list[Point] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.benchmark}({', '.join(self.params)})" if self.params else self.benchmark

    def facet(self, key: str, default: str = "") -> str:
        return dict(self.facets).get(key, default)

    @property
    def values(self) -> list[float]:
        return [p.value for p in self.points]


def _weight(row: list, columns: list[str], k: int) -> float | None:
    """asv's point weight (asv._stats.get_weight): 2 / |ci_b - ci_a|, None when unknown or infinite."""
    if not all(c in columns and columns.index(c) < len(row) for c in CI_COLUMNS):
        return None
    a_list, b_list = (row[columns.index(c)] for c in CI_COLUMNS)
    try:
        a, b = a_list[k], b_list[k]
        width = abs(b - a)
    except (TypeError, IndexError):
        return None
    if a is None or b is None or not math.isfinite(width) or width == 0:
        return None
    return 2.0 / width


def _read(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"unreadable asv result {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"malformed asv result {path}: expected a JSON object")
    return doc


def _points_of(doc: dict, path: Path):
    """(benchmark, params tuple, value, weight) for every measured point of one result file."""
    columns = doc.get("result_columns") or []
    if "result" not in columns:
        raise UsageError(f"malformed asv result {path}: no 'result' in result_columns")
    for key, row in (doc.get("results") or {}).items():
        if not isinstance(row, list) or not row:
            continue
        values = row[columns.index("result")]
        params = row[columns.index("params")] if "params" in columns and len(row) > columns.index("params") else []
        if values is None:
            continue
        combos = list(itertools.product(*params)) if params else [()]
        if not isinstance(values, list):
            values = [values]
        for k, (combo, value) in enumerate(zip(combos, values)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue  # failed (None), skipped (NaN) or not a number: no point of the history
            yield key, tuple(combo), float(value), _weight(row, columns, k)


def result_files(machine_dir: Path) -> list[Path]:
    """asv result files of one machine folder (machine.json and benchmarks.json excluded)."""
    return sorted(p for p in machine_dir.glob("*.json") if p.name not in ("machine.json", "benchmarks.json"))


def machines(results_dir: Path) -> list[str]:
    """Machine folders of an asv results folder (those holding a machine.json)."""
    return sorted(p.name for p in results_dir.iterdir() if p.is_dir() and (p / "machine.json").is_file())


def load_series(results_dir: Path, machine: str) -> list[Series]:
    """Every series of `machine`, each sorted by commit date (asv's order on a linear branch)."""
    by_key: dict[tuple, Series] = {}
    for path in result_files(results_dir / machine):
        doc = _read(path)
        if "commit_hash" not in doc or "results" not in doc:
            continue
        facets = tuple(sorted({**{k: str(v) for k, v in (doc.get("params") or {}).items()},
                               "env": str(doc.get("env_name", ""))}.items()))
        for bench, params, value, weight in _points_of(doc, path):
            key = (bench, params, facets)
            series = by_key.setdefault(key, Series(machine, bench, params, facets))
            series.points.append(Point(doc["commit_hash"], int(doc.get("date") or 0), value, weight))
    out = list(by_key.values())
    for s in out:
        s.points.sort(key=lambda p: (p.date, p.commit))
    return sorted(out, key=lambda s: (s.benchmark, s.params, s.facets))


def varying_facets(series: list[Series]) -> list[str]:
    """The facet keys whose values differ between series of the same machine (what names a host series)."""
    seen: dict[str, set] = {}
    for s in series:
        for k, v in s.facets:
            seen.setdefault(k, set()).add(v)
    keys = {k for s in series for k, _ in s.facets}
    return sorted(k for k in keys if len(seen.get(k, ())) > 1 or any(k not in dict(s.facets) for s in series))


__all__ = ["Point", "Series", "load_series", "machines", "result_files", "varying_facets"]
