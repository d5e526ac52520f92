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
    thresholds = "results/reports/gate/{machine}/thresholds/thresholds.json"  # derived factors (gate.thresholds)
    advisory_above = 1.25  # a point whose measured noise needs a wider factor is advisory, never blocking

    [profile.xeon]         # what one CI leg measures, and how (`--profile xeon`); overrides [gate]
    bench = "."            # asv --bench regex of the leg
    passes = 5             # and any of paired_seconds, paired_bench, paired_restarts, paired_confirm,
                           # paired_screen; factors stay in [gate] and [[rule]]

    [[rule]]               # first matching rule wins, per key
    match = "bench_replay.*h2d*"
    factor = 1.30
    advisory = "why"       # optional: these points are advisory (listed with this reason, never blocking)

Factors stack too (applied per point by gate.policy.policy_for): a point's factor derived from its measured noise (the thresholds table of the
machine, rlperf.gate.thresholds) > a [[rule]] factor > [gate] factor; a point whose table factor is above
`advisory_above` is advisory (judged, listed, never blocking). `--factor` replaces the [gate] factor and
every table factor (rules still win over it where no table factor stands, as before); advisory points
stay advisory.

Settings stack, last wins: built-in defaults < [gate] < the chosen profile < `--quick` (1 pass, no
paired sampling) < each flag given on the command line. The gate names the profile, `--quick` and
every overriding flag in its verdict, so a local run can be checked against what CI ran.

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
DEFAULT_THRESHOLDS = "results/reports/gate/{machine}/thresholds/thresholds.json"
# Above this derived factor a point is advisory: a kernel that needs more than 25 % to stay quiet on
# unchanged code cannot catch the 10-20 % regressions the suite exists for (docs/gate.md).
DEFAULT_ADVISORY_ABOVE = 1.25


@dataclass(frozen=True)
class Rule:
    """Overrides for the benchmarks whose name (with or without parameters) matches `match`."""

    match: str
    factor: float | None = None
    paired_factor: float | None = None  # for these points when judged on paired samples
    direction: str | None = None
    tolerance: float | None = None
    advisory: str | None = None  # why these points cannot be gated (e.g. their measured power): never blocking

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
    bench: str | None = None  # asv --bench regex: the profile's, or --bench (None: every benchmark)
    profile: str | None = None  # the [profile.NAME] applied (None: the file defines none, or none was asked for)
    profile_from: str = ""  # why that profile: "--profile", or the default's reason
    quick: bool = False  # --quick: 1 pass, no paired sampling; not what CI runs
    overrides: tuple[str, ...] = ()  # command-line flags that replaced a setting, as given ("--passes 3")
    factor_from_cli: bool = False  # --factor given: it replaces the table's factors as well as [gate] factor
    thresholds: str | None = DEFAULT_THRESHOLDS  # path template of the machine's table ({machine})
    advisory_above: float = DEFAULT_ADVISORY_ABOVE
    table: dict | None = None  # point name -> gate.thresholds.Threshold, once with_table() read it
    table_source: str = ""  # the table read, or why none was


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
    unknown = set(raw) - {"match", "factor", "paired_factor", "direction", "tolerance", "advisory"}
    if unknown or not isinstance(raw.get("match"), str):
        raise UsageError(f"{where}: needs a string 'match'; allowed keys: match, factor, paired_factor, "
                         f"direction, tolerance, advisory (got {sorted(raw)})")
    advisory = raw.get("advisory")
    if advisory is not None and not (isinstance(advisory, str) and advisory.strip()):
        raise UsageError(f"{where}: advisory must be a non-empty string saying why, got {advisory!r}")
    direction = raw.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise UsageError(f"{where}: direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    tolerance = raw.get("tolerance")
    if tolerance is not None and (not isinstance(tolerance, (int, float)) or tolerance < 0):
        raise UsageError(f"{where}: tolerance must be a number >= 0, got {tolerance!r}")
    factor = raw.get("factor")
    return Rule(match=raw["match"], direction=direction, advisory=advisory,
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


# What a profile may set: what a leg measures and how. Factors are not among them (they stay in [gate]
# and [[rule]]), so choosing a profile never changes how a number is judged.
PROFILE_KEYS = ("bench", "passes", "paired_seconds", "paired_bench", "paired_restarts", "paired_confirm",
                "paired_screen")
_GATE_KEYS = ("factor", "p_threshold", "passes", "paired_seconds", "paired_bench", "paired_factor", "paired_restarts",
              "paired_confirm", "paired_screen", "thresholds", "advisory_above")
# the flag that overrides each setting on the command line
FLAGS = {"factor": "--factor", "bench": "--bench", "passes": "--passes", "paired_seconds": "--paired",
         "paired_bench": "--paired-bench", "paired_restarts": "--paired-restarts", "paired_confirm": "--paired-confirm",
         "paired_screen": "--paired-screen"}
_CHECKS = {"bench": check_regex, "passes": check_passes, "paired_seconds": check_paired_seconds,
           "paired_bench": check_regex, "paired_restarts": check_passes, "paired_confirm": check_confirm,
           "paired_screen": check_screen}
_DEFAULTS = {"bench": None, "passes": 3, "paired_seconds": 0.0, "paired_bench": None, "paired_restarts": 1,
             "paired_confirm": 0, "paired_screen": 1.0}
# --quick: one pass and no paired sampling, a look in minutes; the verdict says it is not CI's setting
QUICK = {"passes": 1, "paired_seconds": 0.0}


def default_profile(cuda_visible: bool) -> tuple[str, str]:
    """(name, why) of the profile a run uses when none is named: the CI leg a machine like this one is.

    `gpu` where a CUDA device is visible: such a host's CPU may be bimodal (the H200 runner's is), so its
    leg gates the replay suite; else `xeon`, which gates everything (on a box with fewer cores its
    paired points at more threads skip themselves, as in any asv run there)."""
    if cuda_visible:
        return "gpu", "default here: a CUDA device is visible"
    return "xeon", "default here: no CUDA device visible"


def _read(path: str | None) -> tuple[dict, str | None]:
    if path is None and os.path.isfile(DEFAULT_PATH):
        path = DEFAULT_PATH
    if path is None:
        return {}, None
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh), path
    except OSError as exc:
        raise UsageError(f"cannot read gate config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"gate config {path} is not valid TOML: {exc}") from exc


def _profiles(raw, path: str | None) -> dict[str, dict]:
    """[profile.NAME] tables, each checked key by key: {name: {key: value}}."""
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise UsageError(f"{path}: profiles are tables [profile.NAME] (e.g. [profile.xeon]), got {raw!r}")
    out = {}
    for name, table in raw.items():
        unknown = sorted(set(table) - set(PROFILE_KEYS))
        if unknown:
            raise UsageError(f"{path}: [profile.{name}] unknown keys {unknown}; allowed: {', '.join(PROFILE_KEYS)} "
                             "(factors stay in [gate] and [[rule]])")
        out[name] = {key: _CHECKS[key](value, f"{path}: [profile.{name}] {key}") for key, value in table.items()}
    return out


def _choose(profiles: dict, name: str | None, default, path: str | None) -> tuple[str | None, str]:
    """The profile to apply and why: the one named; else, where the file defines profiles and a default
    is wanted (`default` returns (name, why)), the default; else none."""
    valid = f"valid: {', '.join(sorted(profiles))}" if profiles else f"{path or 'no gate config'} defines none"
    if name is not None:
        if name not in profiles:
            raise UsageError(f"--profile {name!r} is not a profile of {path or 'the gate config'}; {valid}")
        return name, "--profile"
    if not profiles or default is None:
        return None, ""
    name, why = default()
    if name not in profiles:
        raise UsageError(f"{path}: no [profile.{name}] for this host ({why}); {valid}: pass --profile NAME")
    return name, why


def _show(value) -> str:
    return f"'{value}'" if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)


def load_config(path: str | None, *, profile: str | None = None, default_profile=None, quick: bool = False,
                factor: float | None = None, bench: str | None = None, passes: int | None = None,
                paired_seconds: float | None = None, paired_bench: str | None = None,
                paired_restarts: int | None = None, paired_confirm: int | None = None,
                paired_screen: float | None = None) -> GateConfig:
    """Read `path` (the default gate.toml may be absent) and stack the settings: [gate] < the profile
    (`profile`, else `default_profile()` -> (name, why) when the file defines profiles) < `quick` < the
    command line (every other keyword: None means not given)."""
    data, source = _read(path)
    path = source
    gate = data.get("gate", {})
    unknown = set(data) - {"gate", "rule", "profile"} | set(gate) - set(_GATE_KEYS)
    if unknown:
        raise UsageError(f"{path}: unknown keys {sorted(unknown)}; allowed: [gate] {', '.join(_GATE_KEYS)}; "
                         f"[profile.NAME] {', '.join(PROFILE_KEYS)}; [[rule]]")
    p_threshold = gate.get("p_threshold", 0.002)
    if not _is_number(p_threshold) or not 0 < p_threshold < 1:
        raise UsageError(f"{path}: p_threshold must be a number in (0, 1), got {p_threshold!r}")
    profiles = _profiles(data.get("profile", {}), path)
    name, why = _choose(profiles, profile, default_profile, path)
    settings = dict(_DEFAULTS)
    settings.update({key: _CHECKS[key](gate[key], f"{path}: [gate] {key}") for key in _DEFAULTS if key in gate})
    settings.update(profiles.get(name, {}))
    if quick:
        settings.update(QUICK)
    cli = {key: value for key, value in dict(bench=bench, passes=passes, paired_seconds=paired_seconds,
                                             paired_bench=paired_bench, paired_restarts=paired_restarts,
                                             paired_confirm=paired_confirm, paired_screen=paired_screen).items()
           if value is not None}
    settings.update({key: _CHECKS[key](value, FLAGS[key]) for key, value in cli.items()})
    overrides = ([f"--factor {factor:g}"] if factor is not None else []) + [f"{FLAGS[k]} {_show(v)}"
                                                                              for k, v in cli.items()]
    thresholds = gate.get("thresholds", DEFAULT_THRESHOLDS)
    if not isinstance(thresholds, str) or not thresholds:
        raise UsageError(f"{path}: [gate] thresholds must be a path (with {{machine}}), got {thresholds!r}")
    return GateConfig(
        thresholds=thresholds, factor_from_cli=factor is not None,
        advisory_above=check_factor(gate.get("advisory_above", DEFAULT_ADVISORY_ABOVE), f"{path}: [gate] advisory_above"),
        factor=check_factor(factor, "--factor") if factor is not None
        else check_factor(gate.get("factor", 1.10), f"{path}: [gate]"),
        p_threshold=float(p_threshold),
        # --factor on the CLI is the one factor of that run: it replaces paired_factor too
        paired_factor=None if factor is not None or gate.get("paired_factor") is None
        else check_factor(gate["paired_factor"], f"{path}: [gate] paired_factor"),
        rules=tuple(_rule(r, i, path) for i, r in enumerate(data.get("rule", []))),
        source=source, profile=name, profile_from=why, quick=quick, overrides=tuple(overrides),
        **settings,
    )


def settings_label(config: GateConfig) -> str:
    """One line for the verdict's mode: the profile and why, --quick, and every command-line override."""
    parts = []
    if config.quick:
        parts.append("QUICK LOOK (--quick: 1 pass, no paired sampling), NOT what CI runs")
    if config.profile:
        parts.append(f"profile {config.profile} of {config.source} ({config.profile_from})")
    if config.overrides:
        parts.append("overridden on the command line: " + ", ".join(config.overrides))
    if config.table_source:
        parts.append(config.table_source + ("; --factor replaces its factors" if config.factor_from_cli else ""))
    return "; ".join(parts)


def with_table(config: GateConfig, machine: str, root: str = ".") -> GateConfig:
    """The config with the machine's thresholds table (gate.thresholds), or with the reason there is none."""
    from dataclasses import replace
    from pathlib import Path

    from rlperf.gate.thresholds import load_table

    shown = config.thresholds.format(machine=machine)  # as gate.toml names it, relative to the repository
    path = Path(root) / shown
    if not path.is_file():
        return replace(config, table={}, table_source=f"no thresholds table {shown} for machine {machine!r}: "
                                                      "every factor from gate.toml")
    table = load_table(path)
    derived = sum(1 for t in table.values() if t.factor is not None)
    return replace(config, table=table, table_source=f"factors of {derived} point(s) derived from measured noise "
                                                     f"({shown}), advisory above ×{config.advisory_above:g}")


__all__ = ["DEFAULT_PATH", "FLAGS", "GateConfig", "PROFILE_KEYS", "QUICK", "Rule", "check_confirm",
           "check_factor", "check_screen", "check_paired_seconds", "check_passes", "check_regex", "default_profile",
           "load_config", "settings_label", "with_table"]
