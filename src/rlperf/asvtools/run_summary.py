"""The end of `make bench`: points measured, skipped (reasons grouped, with counts) and failed (by name).

Values come from the result file asv just wrote (a number: measured, NaN: skipped, null: failed); asv
stores no reasons there, so the skip reasons and the last line of each failure are read from the run's
log, where `--show-stderr` prints them per point under `For parameters: ...`. Points the plan left out
(no CUDA here) count as skipped with the plan's reason.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from asv.results import Results

from rlperf.asvtools.bench_plan import Plan, Point

# asv's progress prefix, e.g. "[ 37.50%] ··· " (three dots: a benchmark's line, four: its stderr block)
_HEADER = re.compile(r"^\[\s*[\d.]+%\] ·{3} (?P<name>[\w.]+)\s")
_BLOCK = re.compile(r"^\[\s*[\d.]+%\] ·{4} (?P<first>.*)$")
_SKIP = re.compile(r"asv: skipped: (?:\w+\()?(?P<reason>.*?)\)?\s*$")
_FOR_PARAMS = "For parameters: "


@dataclass
class Summary:
    measured: list[Point] = field(default_factory=list)
    skipped: dict[Point, str] = field(default_factory=dict)  # point -> reason
    failed: dict[Point, str] = field(default_factory=dict)  # point -> last line of its error

    def reasons(self) -> list[tuple[str, int]]:
        """Skip reasons with their point counts, most frequent first."""
        return Counter(self.skipped.values()).most_common()


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text.replace("\\'", "'")


def _resolve(name: str, names) -> str:
    """asv shortens long names on its lines to '...tail'; the one known name with that tail."""
    if not name.startswith("...") or not names:
        return name
    hits = [n for n in names if n.endswith(name[3:])]
    return hits[0] if len(hits) == 1 else name


def parse_log(text: str, names=()) -> tuple[dict[str, str], dict[str, str]]:
    """({point name: skip reason}, {point name: last error line}) from asv's --show-stderr output;
    `names` (the benchmarks run) resolve the names asv shortened.

    A benchmark skipped because its class's setup_cache failed gets the setup_cache's last error line."""
    skips: dict[str, str] = {}
    errors: dict[str, str] = {}
    bench = current = last = None
    setup_error = None  # last line of the most recent failed setup_cache
    in_block = in_setup = False

    def close():
        if current and last and current not in skips:
            errors[current] = last

    for raw in text.splitlines():
        block = _BLOCK.match(raw)
        if block:
            close()
            in_block, current, last = True, (None if in_setup else bench), None
            line = block.group("first")
        elif raw.startswith(("[", "·")):
            close()
            in_block, current, last = False, None, None
            header = _HEADER.match(raw)
            in_setup = " · Setting up " in raw or "··· Setting up " in raw
            if header and not in_setup:
                bench = _resolve(header.group("name"), names)
                if "skipped (setup_cache failed)" in raw:
                    errors[bench] = f"setup_cache failed: {setup_error or 'see the log'}"
            continue
        elif in_block:
            line = raw
        else:
            continue
        line = line.strip()
        if in_setup:
            if line and not line.startswith("asv: setup_cache failed"):
                setup_error = line
        elif line.startswith(_FOR_PARAMS):
            close()
            current, last = f"{bench}({line[len(_FOR_PARAMS):]})", None
        elif (m := _SKIP.search(line)) and current:
            skips[current] = _unquote(m.group("reason"))
        elif line and not line.startswith("asv: benchmark failed") and current:
            last = line
    close()
    return skips, errors


def result_file(results_dir: str, machine: str, sha: str) -> str | None:
    """The newest result file of `sha` on `machine` (the one asv just wrote), or None."""
    folder = os.path.join(results_dir, machine)
    if not os.path.isdir(folder):
        return None
    files = [os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(sha[:8] + "-") and f.endswith(".json")]
    return max(files, key=os.path.getmtime) if files else None


def stored_values(path: str | None) -> dict[str, float | None]:
    """{point name: value} of one asv result file (NaN: skipped, None: failed); {} without a file."""
    if path is None:
        return {}
    result = Results.load(path)
    out = {}
    for key in result.get_all_result_keys():
        params = result.get_result_params(key)
        values = result.get_result_value(key, params)
        combos = list(itertools.product(*params)) if params else [()]
        for combo, value in zip(combos, values):
            out[Point(key, tuple(combo)).name] = value
    return out


def summarize(plan: Plan, values: dict[str, float | None], log_text: str) -> Summary:
    """Each planned point as measured, skipped (with its reason) or failed (with its error)."""
    skips, errors = parse_log(log_text, {p.benchmark for p in plan.run})
    summary = Summary(skipped=dict(plan.not_run))
    for p in plan.run:
        value = values.get(p.name, None)
        if p.name not in values:
            summary.failed[p] = errors.get(p.name, "no result stored (asv did not run it)")
        elif value is None:
            summary.failed[p] = errors.get(p.name, "failed (see the log)")
        elif isinstance(value, float) and math.isnan(value):
            summary.skipped[p] = skips.get(p.name, "skipped (no reason printed)")
        else:
            summary.measured.append(p)
    return summary


def _class_of(benchmark: str) -> str:
    """module.Class of module.Class.method (a module-level benchmark stays as it is)."""
    return benchmark.rsplit(".", 1)[0] if benchmark.count(".") > 1 else benchmark


def format_summary(summary: Summary, *, results: str, site: str, log: str, wall_s: float | None = None) -> list[str]:
    """The closing lines: counts, grouped reasons, failed names, then where everything is."""
    total = len(summary.measured) + len(summary.skipped) + len(summary.failed)
    lines = ["", f"== make bench: {total} points: {len(summary.measured)} measured, {len(summary.skipped)} "
                 f"skipped, {len(summary.failed)} failed" + (f" ({wall_s / 60:.1f} min)" if wall_s else "")]
    if summary.skipped:
        lines.append("skipped:")
        for reason, count in summary.reasons():
            benches = sorted({_class_of(p.benchmark) for p, r in summary.skipped.items() if r == reason})
            lines.append(f"  {count:4d} x {reason}")
            lines.append(f"         in {', '.join(benches)}")
    if summary.failed:
        lines.append("FAILED:")
        for p, error in summary.failed.items():
            lines.append(f"  {p.name}: {error}")
    lines += [f"results: {results}", f"site:    {site}", f"log:     {log}"]
    return lines


__all__ = ["Summary", "format_summary", "parse_log", "result_file", "stored_values", "summarize"]
