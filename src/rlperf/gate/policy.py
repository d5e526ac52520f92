"""How one point is judged: its direction, factor and tolerance, and where each came from.

Sources stack, first wins: the benchmark's own attributes (rlperf.gate.meta, read from benchmarks.json)
> gate.toml's [[rule]] > the default (lower is better). Factors: the machine's thresholds table
(gate.thresholds, measured noise) > a rule's factor > [gate] factor; a point whose measured noise needs
more than `advisory_above` is advisory, and so is a point a rule marks `advisory` (with its reason,
e.g. a detection power measured too low to gate on). The verdict (gate.verdict) asks this once per point.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlperf.errors import UsageError
from rlperf.gate.config import GateConfig
from rlperf.gate.meta import DIRECTIONS


@dataclass(frozen=True)
class Policy:
    """How one point is judged, and where each part of that came from (shown in the report)."""

    direction: str
    factor: float
    tolerance: float | None
    source: str
    paired_factor: float | None = None  # used instead of factor when the point is judged on paired samples
    advisory: str | None = None  # why the point is too noisy to gate (its measured spread and needed factor)
    advisory_paired: bool = False  # the advisory holds for paired samples too (noise of fresh processes)


def _first(rules, attr: str):
    return next(((getattr(r, attr), r.match) for r in rules if getattr(r, attr) is not None), (None, None))


def _tolerance_for(tolerance, key: str, params: tuple[str, ...]):
    """A number, or a {parameter value: number} mapping resolved for this point's parameters."""
    if not isinstance(tolerance, dict):
        return tolerance
    for value in params:
        text = value.strip("'\"")
        if text in tolerance:
            return tolerance[text]
    if "*" in tolerance:
        return tolerance["*"]
    raise UsageError(f"{key}{list(params)}: tolerance mapping has no entry for these parameters "
                     f"(keys: {sorted(tolerance)}; add '*' for a default)")


def policy_for(config: GateConfig, key: str, name: str, bench_meta: dict | None,
               params: tuple[str, ...] = ()) -> Policy:
    """Direction, factor and tolerance for one point: benchmark attributes > config rules > defaults.

    For paired samples: a rule's paired_factor, else a rule's factor (a rule marks a noisier
    benchmark), else [gate] paired_factor, else the factor."""
    meta = bench_meta or {}
    rules = [r for r in config.rules if r.applies(key, name)]
    factor, factor_src = _first(rules, "factor")
    paired, paired_src = _first(rules, "paired_factor")
    direction, tolerance, src = meta.get("direction"), meta.get("tolerance"), "benchmark"
    if direction is None and tolerance is None:
        (direction, dir_src), (tolerance, tol_src) = _first(rules, "direction"), _first(rules, "tolerance")
        src = f"rule {dir_src or tol_src}" if (dir_src or tol_src) else "default"
    tolerance = _tolerance_for(tolerance, key, params)
    if tolerance is not None:
        direction = "tolerance"
    direction = direction or "lower"
    if direction not in DIRECTIONS or (direction == "tolerance" and tolerance is None):
        raise UsageError(f"{key}: direction {direction!r} needs one of {DIRECTIONS} (tolerance needs a value)")
    measured, advisory, advisory_paired = _measured(config, key, name, direction)
    said, said_src = _first(rules, "advisory")
    if advisory is None and said is not None:  # a rule's reason, from a measurement it names; paired too
        advisory, advisory_paired = f"advisory by rule {said_src}: {said}", True
    if measured is not None:
        factor_text = f"factor: derived, {measured.spread} ({measured.detail})"
        if measured.factor is None:
            factor_text = f"factor: {'rule ' + factor_src if factor_src else '[gate]'}, too little measured noise ({measured.detail})"
        elif config.factor_from_cli:
            factor, factor_src = config.factor, None
            factor_text = f"factor: --factor (replaces derived ×{measured.factor:g})"
        else:
            factor, factor_src = max(measured.factor, config.factor), None
    else:
        factor_text = f"factor: rule {factor_src}" if factor_src else ""
    sources = ([f"direction: {src}"] + ([factor_text] if factor_text else [])
               + ([f"paired factor: rule {paired_src}"] if paired_src else []))
    return Policy(direction=direction, factor=factor or config.factor,
                  tolerance=None if tolerance is None else float(tolerance), source="; ".join(sources),
                  paired_factor=paired or (factor if factor_src else None) or config.paired_factor or config.factor,
                  advisory=advisory, advisory_paired=advisory_paired)


def _measured(config: GateConfig, key: str, name: str, direction: str):
    """(the point's thresholds entry or None, the advisory reason or None, whether it holds when paired).

    Tolerance points are not judged by a factor; advisory holds for paired samples only when the noise
    was measured across fresh processes (pairs of fresh workers do not cancel it; the drift between
    sessions that the history also holds, they do)."""
    if direction == "tolerance" or not config.table:
        return None, None, False
    entry = config.table.get(name) or config.table.get(key)
    if entry is None or entry.factor is None or entry.factor <= config.advisory_above:
        return entry, None, False
    reason = (f"too noisy to gate: {entry.spread} needs ×{entry.factor:.2f} for 1 % false alarms, above the "
              f"ceiling ×{config.advisory_above:g} ({entry.detail})")
    return entry, reason, entry.source == "null-runs"


__all__ = ["Policy", "policy_for"]
