"""The reviewed steps of the committed asv history: changes of the measured code, kept as data.

`results/reports/history/known-steps.json` names, for each step with a code cause, its series (machine,
host `cpu_flags`, benchmark point) and the consecutive commits of that series that bracket it
(`before..after`), with the cause read in `git log` (docs/history.md). Two readers: the gate's thresholds
leave a known step out of a point's consecutive-commit spread (a rewrite is not run-to-run noise), and
tests/history checks the step detection against it. The file also records series that are flat by the
code and steps without a code cause, which only the tests read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rlperf.errors import UsageError
from rlperf.history.series import Series

DEFAULT_PATH = Path("results/reports/history/known-steps.json")
_FIELDS = ("machine", "cpu_flags", "benchmark", "before", "after", "direction", "ratio", "cause", "why")


@dataclass(frozen=True)
class KnownStep:
    """One step of one host series with a code cause; `detected` False: the step detection misses it."""

    machine: str
    cpu_flags: str
    benchmark: str  # the point's name with its parameters, as a Series names it
    before: str  # 8-character commit: last measured at the old level
    after: str  # 8-character commit: first measured at the new level
    direction: str
    ratio: float
    cause: str
    why: str
    detected: bool = True

    def of(self, series: Series) -> bool:
        """Whether this step belongs to `series` (its machine, host and point)."""
        return (self.machine, self.cpu_flags, self.benchmark) == (series.machine, series.facet("cpu_flags"),
                                                                   series.name)


def read_doc(path: Path = DEFAULT_PATH) -> dict:
    """The whole file (known steps, flat series, steps without a code cause); unreadable: a usage error."""
    try:
        doc = json.loads(Path(path).read_text())
        if not isinstance(doc, dict) or not isinstance(doc.get("known_steps"), list):
            raise ValueError("no 'known_steps' list")
    except (OSError, ValueError) as exc:
        raise UsageError(f"unreadable known-steps file {path}: {exc}") from None
    return doc


def load(path: Path = DEFAULT_PATH) -> list[KnownStep]:
    """The known steps of the file; an entry without a field of KnownStep is a usage error naming it."""
    steps = []
    for k, entry in enumerate(read_doc(path)["known_steps"]):
        missing = [f for f in _FIELDS if not isinstance(entry, dict) or f not in entry]
        if missing:
            raise UsageError(f"{path}: known_steps[{k}] lacks {', '.join(missing)}")
        steps.append(KnownStep(**{f: entry[f] for f in _FIELDS}, detected=bool(entry.get("detected", True))))
    return steps


def spanned_changes(series: Series, steps: list[KnownStep]) -> set[int]:
    """Indices k of the changes values[k] -> values[k+1] of `series` that lie between a known step's
    `before` and `after` (one change, or each of them where commits measured later fall in between)."""
    commits = [p.commit[:8] for p in series.points]
    out: set[int] = set()
    for step in steps:
        if step.of(series) and step.before in commits and step.after in commits:
            out.update(range(commits.index(step.before), commits.index(step.after)))
    return out


__all__ = ["DEFAULT_PATH", "KnownStep", "load", "read_doc", "spanned_changes"]
