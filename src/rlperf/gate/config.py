"""gate.toml: the default factor, the significance threshold and per-benchmark rules by glob.

    [gate]
    factor = 1.10          # head/base beyond this (and significant) is a regression
    p_threshold = 0.002    # asv's Mann–Whitney threshold (stored-results mode)
    passes = 3             # interleaved base/head passes of `--run` (median of per-pass ratios)
    paired_seconds = 0     # `--run`: seconds of paired sampling per timed point (0: off; gate.paired)
    paired_bench = "..."   # regex: only the points it finds are paired (default: every pairable one)
    paired_factor = 1.05   # the factor for points judged on paired samples (default: factor)
    paired_restarts = 1    # successive fresh pairs of worker processes per point (seconds split)
    paired_confirm = 0     # rounds of re-sampling a paired point flagged as a regression (0: off)
    paired_screen = 1.0    # with paired_confirm: re-sample above 1 + paired_screen * (paired factor - 1)

    [[rule]]               # first matching rule wins, per key
    match = "bench_replay.*h2d*"
    factor = 1.30

A benchmark's own `direction`/`tolerance` attributes (rlperf.gate.meta) win over rules; rules fill in
where the benchmark cannot say (e.g. a suite that predates the decorators).
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
from dataclasses import dataclass, field

from rlperf.errors import UsageError
from rlperf.gate.meta import DIRECTIONS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DEFAULT_PATH = "gate.toml"


@dataclass(frozen=True)
class Rule:
    """Overrides for the benchmarks whose name (with or without parameters) matches `match`."""

    match: str
    factor: float | None = None
    paired_factor: float | None = None  # for these points when judged on paired samples
    direction: str | None = None
    tolerance: float | None = None

    def applies(self, key: str, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.match) or fnmatch.fnmatchcase(key, self.match)


@dataclass(frozen=True)
class GateConfig:
    factor: float = 1.10
    p_threshold: float = 0.002
    passes: int = 3
    paired_seconds: float = 0.0  # > 0: `--run` judges time_ (and sampled track_) points on paired samples (gate.paired)
    paired_bench: str | None = None  # regex (re.search on the point's name): which of them are paired
    paired_factor: float | None = None  # points judged on paired samples (None: factor)
    paired_restarts: int = 1  # fresh worker pairs per point, one after another
    paired_confirm: int = 0  # a flagged paired point is sampled again (same spec) up to this many times
    paired_screen: float = 1.0  # "flagged" for a confirming round: ratio > 1 + paired_screen * (factor - 1)
    rules: tuple[Rule, ...] = field(default_factory=tuple)
    source: str | None = None


@dataclass(frozen=True)
class Policy:
    """How one point is judged, and where each part of that came from (shown in the report)."""

    direction: str
    factor: float
    tolerance: float | None
    source: str
    paired_factor: float | None = None  # used instead of factor when the point is judged on paired samples


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_factor(value, where: str) -> float:
    """A factor is a finite number > 1: 1 would flag pure noise, nan/inf would pass everything."""
    if not _is_number(value) or not math.isfinite(value) or value <= 1.0:
        raise UsageError(f"{where}: factor must be a finite number > 1 (e.g. 1.10 for 10 %), got {value!r}")
    return float(value)


def check_passes(value, where: str) -> int:
    """Interleaved passes: a whole number >= 1 (odd counts give a true median)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UsageError(f"{where}: passes must be a whole number >= 1, got {value!r}")
    return value


def check_confirm(value, where: str) -> int:
    """Confirming rounds: a whole number >= 0 (0: a first-round flag is the verdict)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UsageError(f"{where}: paired_confirm must be a whole number >= 0 (0: off), got {value!r}")
    return value


def check_screen(value, where: str) -> float:
    """The share of a point's margin above which a confirming round re-samples it: a number in (0, 1]
    (1: only a point the judge flags; 0.6 at factor 1.05: any point above x1.03)."""
    if not _is_number(value) or not 0 < value <= 1:
        raise UsageError(f"{where}: paired_screen must be a number in (0, 1], got {value!r}")
    return float(value)


def check_paired_seconds(value, where: str) -> float:
    """Seconds of paired sampling per point: a finite number >= 0 (0 turns it off)."""
    if not _is_number(value) or not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: paired_seconds must be a finite number >= 0 (0: off), got {value!r}")
    return float(value)


def _rule(raw: dict, index: int, path: str) -> Rule:
    where = f"{path}: rule[{index}]"
    unknown = set(raw) - {"match", "factor", "paired_factor", "direction", "tolerance"}
    if unknown or not isinstance(raw.get("match"), str):
        raise UsageError(f"{where}: needs a string 'match'; allowed keys: match, factor, paired_factor, "
                         f"direction, tolerance (got {sorted(raw)})")
    direction = raw.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise UsageError(f"{where}: direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    tolerance = raw.get("tolerance")
    if tolerance is not None and (not isinstance(tolerance, (int, float)) or tolerance < 0):
        raise UsageError(f"{where}: tolerance must be a number >= 0, got {tolerance!r}")
    factor = raw.get("factor")
    return Rule(match=raw["match"], direction=direction,
                tolerance=None if tolerance is None else float(tolerance),
                factor=None if factor is None else check_factor(factor, where),
                paired_factor=None if raw.get("paired_factor") is None
                else check_factor(raw["paired_factor"], f"{where} paired_factor"))


def check_regex(value, where: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{where}: expected a regular expression string, got {value!r}")
    try:
        re.compile(value)
    except re.error as exc:
        raise UsageError(f"{where}: {value!r} is not a valid regular expression: {exc}") from None
    return value


def load_config(path: str | None, *, factor: float | None = None, passes: int | None = None,
                paired_seconds: float | None = None, paired_bench: str | None = None,
                paired_restarts: int | None = None, paired_confirm: int | None = None,
                paired_screen: float | None = None) -> GateConfig:
    """Read `path` (the default gate.toml may be absent); --factor, --passes and --paired on the CLI win."""
    data: dict = {}
    source = None
    if path is None and os.path.isfile(DEFAULT_PATH):
        path = DEFAULT_PATH
    if path is not None:
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise UsageError(f"cannot read gate config {path}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"gate config {path} is not valid TOML: {exc}") from exc
        source = path
    gate = data.get("gate", {})
    unknown = set(data) - {"gate", "rule"} | set(gate) - {"factor", "p_threshold", "passes", "paired_seconds", "paired_bench",
                                                                 "paired_factor", "paired_restarts", "paired_confirm",
                                                                 "paired_screen"}
    if unknown:
        raise UsageError(f"{path}: unknown keys {sorted(unknown)}; allowed: [gate] factor, p_threshold, "
                         "passes, paired_seconds, paired_bench, paired_factor, paired_restarts, paired_confirm, "
                         "paired_screen; "
                         "[[rule]]")
    p_threshold = gate.get("p_threshold", 0.002)
    if not _is_number(p_threshold) or not 0 < p_threshold < 1:
        raise UsageError(f"{path}: p_threshold must be a number in (0, 1), got {p_threshold!r}")
    return GateConfig(
        factor=check_factor(factor, "--factor") if factor is not None
        else check_factor(gate.get("factor", 1.10), f"{path}: [gate]"),
        p_threshold=float(p_threshold),
        passes=check_passes(passes, "--passes") if passes is not None
        else check_passes(gate.get("passes", 3), f"{path}: [gate]"),
        paired_seconds=check_paired_seconds(paired_seconds, "--paired") if paired_seconds is not None
        else check_paired_seconds(gate.get("paired_seconds", 0.0), f"{path}: [gate]"),
        # --factor on the CLI is the one factor of that run: it replaces paired_factor too
        paired_factor=None if factor is not None or gate.get("paired_factor") is None
        else check_factor(gate["paired_factor"], f"{path}: [gate] paired_factor"),
        paired_restarts=check_passes(paired_restarts, "--paired-restarts") if paired_restarts is not None
        else check_passes(gate.get("paired_restarts", 1), f"{path}: [gate] paired_restarts"),
        paired_confirm=check_confirm(paired_confirm, "--paired-confirm") if paired_confirm is not None
        else check_confirm(gate.get("paired_confirm", 0), f"{path}: [gate]"),
        paired_screen=check_screen(paired_screen, "--paired-screen") if paired_screen is not None
        else check_screen(gate.get("paired_screen", 1.0), f"{path}: [gate]"),
        paired_bench=check_regex(paired_bench, "--paired-bench") if paired_bench is not None
        else (None if "paired_bench" not in gate else check_regex(gate["paired_bench"], f"{path}: [gate] paired_bench")),
        rules=tuple(_rule(r, i, path) for i, r in enumerate(data.get("rule", []))),
        source=source,
    )


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
    sources = ([f"direction: {src}"] + ([f"factor: rule {factor_src}"] if factor_src else [])
               + ([f"paired factor: rule {paired_src}"] if paired_src else []))
    return Policy(direction=direction, factor=factor or config.factor,
                  tolerance=None if tolerance is None else float(tolerance), source="; ".join(sources),
                  paired_factor=paired or factor or config.paired_factor or config.factor)


__all__ = ["DEFAULT_PATH", "GateConfig", "Policy", "Rule", "check_confirm", "check_factor", "check_screen", "check_paired_seconds", "check_passes",
           "check_regex", "load_config", "policy_for"]
