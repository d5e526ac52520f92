"""Per-point factors from measured noise: the table `rlperf gate` reads instead of hand-set wide factors.

One rule for every point (docs/gate.md, Thresholds from data). The gate compares two measurements of a
point; on unchanged code the log of their ratio is spread with a standard deviation `sigma` (the
"pair spread"). A one-sided 1 % false-alarm band for one such comparison is

    factor = exp(Z * sigma),  Z = 2.326 (the normal distribution's 99th percentile)

a z-score rule in the spirit of conbench's lookback z-score (a result is an outlier when it lies more than
z standard deviations from the history of its benchmark), with the deviation estimated per point and
machine from one of two sources:

- the stored history (results/asv/<machine>/): the log-changes between consecutive commits of one host
  series (a host change starts a new series and is never a change, rlperf.history.series), pooled over
  the machine's host series; sigma = 1.4826 x their median absolute deviation. A median-based scale
  keeps a real step (one large change among many small ones) out of the noise estimate, as rustc-perf's
  interquartile fences keep outliers out of its significance threshold. That is not enough where a
  short history holds a step (the H200's gathers: 12 changes, one of them the timing fix de34abe), so a
  change that spans a reviewed step of the code (rlperf.history.known_steps) is left out altogether.
- null runs of fresh processes on unchanged code (results/reports/replay/<machine>/run-noise/: the same
  `rlperf replay` command run several times): sigma = sqrt(2) x the CV of the run medians (the spread of
  a ratio of two independent runs), the formula of that folder's noise.md.

When both exist the wider factor stands. A point with fewer than MIN_CHANGES consecutive changes (or
MIN_RUNS null runs) gets no factor: the gate falls back to gate.toml and says so. The ceiling above which
a point is advisory rather than gated lives in gate.toml ([gate] advisory_above): the table is only
measurement.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from rlperf.errors import UsageError
from rlperf.history.known_steps import KnownStep, load as load_known_steps, spanned_changes
from rlperf.history.series import load_series, machines
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.report.tables import markdown_table

Z_ONE_PERCENT = 2.326  # one-sided 1 % of the standard normal
MAD_TO_SD = 1.4826  # a normal distribution's SD per unit of median absolute deviation
MIN_CHANGES = 8  # consecutive changes before a median absolute deviation means something
MIN_RUNS = 5  # null runs before a CV means something (run-noise measured 5)
SCHEMA = "rlperf.gate.thresholds/1"
TABLE_NAME = "thresholds.json"
# the asv class that times each `rlperf replay` metric (benchmarks/bench_replay.py)
REPLAY_CLASSES = {CPU_SAMPLE: "ReplayCpuSample", H2D: "ReplayH2D", END_TO_END: "ReplayEndToEnd",
                  GPU_SAMPLE: "ReplayGpuSample"}


@dataclass(frozen=True)
class Threshold:
    """The measured noise of one point on one machine and the factor the rule gives (None: too little data)."""

    name: str  # asv point name with parameters, as the gate names it
    source: str  # "history" or "null-runs"
    n: int  # consecutive changes (history) or runs (null runs) behind sigma
    sigma: float | None  # SD of the log-ratio of two measurements
    factor: float | None  # exp(Z * sigma); None when n is below the minimum
    detail: str  # where from and what, in words

    @property
    def spread(self) -> str:
        """The measured spread in words: the pair's SD in % (and the runs' CV for null runs)."""
        if self.sigma is None:
            return f"{self.n} {'changes' if self.source == 'history' else 'runs'}, too few"
        if self.source == "null-runs":
            return f"run-to-run CV {self.sigma / math.sqrt(2):.1%}"
        return f"consecutive-commit SD {self.sigma:.1%}"


def factor_of(sigma: float) -> float:
    return math.exp(Z_ONE_PERCENT * sigma)


def sigma_of_changes(changes: list[float]) -> float:
    """Robust SD of log-changes between consecutive commits: a step is one outlier, not spread."""
    centre = statistics.median(changes)
    return MAD_TO_SD * statistics.median(abs(c - centre) for c in changes)


def sigma_of_runs(values: list[float]) -> float:
    """SD of log(run a / run b) for two independent runs: sqrt(2) x the CV of the run medians."""
    return math.sqrt(2) * statistics.stdev(values) / statistics.fmean(values)


def log_changes(values: list[float]) -> list[float]:
    """log(v[i+1] / v[i]) of one host series; a series with a value <= 0 (counts, parity) has none."""
    if any(v <= 0 for v in values):
        return []
    return [math.log(b / a) for a, b in zip(values, values[1:])]


def from_history(results_dir: Path, machine: str, known: list[KnownStep] | None = None) -> list[Threshold]:
    """One entry per point with at least one consecutive change on this machine, changes pooled over hosts;
    a change that spans a `known` step of the code is left out (it is the code's change, not noise)."""
    pooled: dict[str, list[float]] = {}
    hosts: dict[str, int] = {}
    left_out: dict[str, int] = {}
    for series in load_series(results_dir, machine):
        changes = log_changes(series.values)
        if changes:
            spanned = spanned_changes(series, known or [])
            pooled.setdefault(series.name, []).extend(c for k, c in enumerate(changes) if k not in spanned)
            hosts[series.name] = hosts.get(series.name, 0) + 1
            left_out[series.name] = left_out.get(series.name, 0) + len(spanned)
    out = []
    for name, changes in sorted(pooled.items()):
        where = (f"{len(changes)} consecutive-commit changes in {hosts[name]} host series of "
                 f"{results_dir.as_posix()}/{machine}")
        if left_out[name]:
            where += f"; {left_out[name]} across a known step of the code left out"
        out.append(_threshold(name, "history", changes, MIN_CHANGES, sigma_of_changes, where))
    return out


def _threshold(name: str, source: str, data: list[float], minimum: int, sigma_of, where: str) -> Threshold:
    """One point's entry: its sigma and factor, or none (with why) when `data` is shorter than `minimum`."""
    if len(data) < minimum:
        return Threshold(name, source, len(data), None, None, f"{where} (< {minimum})")
    sigma = sigma_of(data)
    return Threshold(name, source, len(data), round(sigma, 6), round(factor_of(sigma), 4), where)


def _run_medians(doc: dict, path: Path) -> dict[str, float]:
    """asv point name -> median of one `rlperf replay` result's samples (the point asv would time)."""
    out = {}
    for case in doc.get("results", []):
        rows, gpus = case.get("capacity_rows"), case.get("world_size")
        if not isinstance(rows, int) or rows <= 0 or rows & (rows - 1) or not isinstance(gpus, int):
            raise UsageError(f"{path}: a result without a power-of-two capacity_rows and world_size")
        for metric, timing in (case.get("timings") or {}).items():
            samples = timing.get("samples_ms") if isinstance(timing, dict) else None
            if samples and metric in REPLAY_CLASSES:
                name = (f"bench_replay.{REPLAY_CLASSES[metric]}.track_ms"
                        f"({rows.bit_length() - 1}, '{case['placement']}', {gpus})")
                out[name] = statistics.median(samples)
    return out


def from_null_runs(folder: Path) -> list[Threshold]:
    """One entry per point of the replay run-noise folder (run*/results.json, one fresh process each)."""
    paths = sorted(folder.glob("run*/results.json"))
    per_point: dict[str, list[float]] = {}
    for path in paths:
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"unreadable null-run result {path}: {exc}") from None
        for name, value in _run_medians(doc, path).items():
            per_point.setdefault(name, []).append(value)
    out = []
    for name, values in sorted(per_point.items()):
        where = f"{len(values)} fresh-process runs of the same command in {folder.as_posix()}"
        out.append(_threshold(name, "null-runs", values, MIN_RUNS, sigma_of_runs, where))
    return out


def _wider(a: Threshold, b: Threshold) -> Threshold:
    """The entry whose factor is wider; an entry with a factor beats one without."""
    if a.factor is None or (b.factor is not None and b.factor > a.factor):
        return b
    return a


def derive(results_dir: Path, machine: str, null_runs: Path | None = None,
           known_steps: Path | None = None) -> list[Threshold]:
    """Every point of `machine` with measured noise, from its history (without the changes across the
    steps of `known_steps`, a known-steps file, if given) and (if given) its null runs."""
    if not results_dir.is_dir():
        raise UsageError(f"no asv results folder {results_dir}")
    names = machines(results_dir)
    if machine not in names:
        raise UsageError(f"no machine {machine!r} in {results_dir}; valid: {', '.join(names) or 'none'}")
    if null_runs is not None and not null_runs.is_dir():
        raise UsageError(f"no null-runs folder {null_runs}")
    if known_steps is not None and not known_steps.is_file():
        raise UsageError(f"no known-steps file {known_steps}")
    known = load_known_steps(known_steps) if known_steps is not None else []
    entries: dict[str, Threshold] = {t.name: t for t in from_history(results_dir, machine, known)}
    for t in from_null_runs(null_runs) if null_runs is not None else []:
        entries[t.name] = _wider(entries[t.name], t) if t.name in entries else t
    return [entries[k] for k in sorted(entries)]


def to_json(machine: str, entries: list[Threshold]) -> str:
    doc = {"schema": SCHEMA, "machine": machine, "rule": f"factor = exp({Z_ONE_PERCENT} * sigma)",
           "min_changes": MIN_CHANGES, "min_runs": MIN_RUNS, "points": [asdict(t) for t in entries]}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def load_table(path: Path) -> dict[str, Threshold]:
    """name -> Threshold of a generated table; a malformed file is a usage error naming it."""
    try:
        doc = json.loads(path.read_text())
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"schema {doc.get('schema')!r}, expected {SCHEMA!r}")
        return {p["name"]: Threshold(**p) for p in doc["points"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"unreadable thresholds table {path}: {exc}; regenerate it with "
                         "rlperf gate-thresholds") from None


def markdown(machine: str, entries: list[Threshold], ceiling: float) -> list[str]:
    """The table for people: each point's spread, the factor it needs, and whether that is gateable."""
    rows = []
    for t in entries:
        verdict = ("falls back to gate.toml" if t.factor is None
                   else "advisory" if t.factor > ceiling else "gated")
        shown = "—" if t.factor is None else f"×{t.factor:.3f}"
        rows.append([f"`{t.name}`", t.source, t.n, t.spread, shown, verdict])
    return markdown_table(["point", "source", "n", "spread", "factor needed", f"at ceiling ×{ceiling:g}"], rows,
                          align="llrlrl")


def provenance(machine: str, command: str, entries: list[Threshold], ceiling: float) -> str:
    """PROVENANCE.md of a generated table: the command that wrote it, the rule, the table for people."""
    return "\n".join([
        f"# Gate thresholds of `{machine}`: factors from measured noise", "",
        "Generated, never typed by hand, by:", "", f"    {command}", "",
        f"Rule (docs/gate.md, Thresholds from data): factor = exp({Z_ONE_PERCENT} x sigma), a one-sided 1 % "
        "false-alarm band for one comparison of two measurements; sigma is 1.4826 x the median absolute "
        "deviation of the log-changes between consecutive commits of each host series (history, pooled over "
        "the machine's hosts, a host change never counted, a change across a known step of the code "
        "(the --known-steps file above, when given) left out), or sqrt(2) x the CV of fresh-process "
        "null runs; "
        f"the wider one stands. Fewer than {MIN_CHANGES} changes or {MIN_RUNS} runs: no factor, the gate falls "
        f"back to gate.toml. The last column applies gate.toml's advisory_above (×{ceiling:g} when generated); "
        "the gate applies the ceiling of the gate.toml it reads.", "",
        *markdown(machine, entries, ceiling), ""])


__all__ = ["MIN_CHANGES", "MIN_RUNS", "TABLE_NAME", "Threshold", "Z_ONE_PERCENT", "derive", "factor_of",
           "from_history", "from_null_runs", "load_table", "log_changes", "markdown", "provenance", "sigma_of_changes",
           "sigma_of_runs", "to_json"]
