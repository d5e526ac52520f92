"""`rlperf gate --bisect A..B`: the first commit of a range whose points regressed against A.

Gate A against B once; the points that regressed there (and only those, through --bench) are then
judged A against the middle commit, halving the first-parent range until one commit is left. Each
comparison is an ordinary gate run, with the caller's measurement mode, so a bisection on stored
results costs nothing and one with --run measures interleaved at every step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rlperf.gate.config import GateConfig
from rlperf.gate.exitcodes import GateExit, InfrastructureError


@dataclass
class Bisection:
    """The outcome: the first bad commit (None when A..B does not regress), and every step taken."""

    good: str
    bad: str
    first_bad: str | None = None
    points: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    exit_code: GateExit = GateExit.OK

    def summary(self) -> str:
        lines = [f"bisect {self.good[:12]}..{self.bad[:12]}"] + [f"  {s}" for s in self.steps]
        if self.first_bad:
            lines.append(f"first commit that regressed: {self.first_bad}")
        return "\n".join(lines)


def _regressed(verdict) -> list[str]:
    return [f.name for f in verdict.findings if f.status in ("regression", "parity")]


def bisect(where, spec: str, config: GateConfig, *, run=None, echo=print) -> Bisection:
    """Binary search over the first-parent commits of `spec` (A..B) for the first one that regresses."""
    from rlperf.asvtools.git import commits_in_range, resolve
    from rlperf.gate.flow import gate

    if ".." not in spec:
        raise InfrastructureError(f"--bisect {spec!r} is not of the form A..B")
    good = resolve(where.repo, spec.split("..", 1)[0] or "HEAD")
    commits = commits_in_range(where.repo, spec)
    if not commits:
        raise InfrastructureError(f"--bisect {spec}: no commits after {good[:12]}")
    out = Bisection(good=good, bad=commits[-1])

    def step(head: str, subset: str | None):
        verdict = gate(replace(where, bench=subset or where.bench), good, head, config, run=run, echo=echo)
        if verdict.errors or verdict.failures:
            raise InfrastructureError(f"gate {good[:12]}..{head[:12]} could not judge: "
                                      + "; ".join(verdict.errors + verdict.failures))
        return _regressed(verdict)

    out.points = step(out.bad, None)
    out.steps.append(f"{out.bad[:12]}: {len(out.points)} point(s) regressed against {good[:12]}")
    if not out.points:
        return out
    subset = "^(" + "|".join(re.escape(p) for p in out.points) + ")$"
    lo, hi = 0, len(commits) - 1  # invariant: commits[hi] regresses; commits before lo do not
    while lo < hi:
        mid = (lo + hi) // 2
        bad = bool(step(commits[mid], subset))
        out.steps.append(f"{commits[mid][:12]}: {'regressed' if bad else 'ok'}")
        lo, hi = (lo, mid) if bad else (mid + 1, hi)
    out.first_bad = commits[hi]
    out.exit_code = GateExit.REGRESSION
    return out


__all__ = ["Bisection", "bisect"]
