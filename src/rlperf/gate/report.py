"""The verdict as a PR comment (Markdown) and as JSON; formatters return text, callers write it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from asv.util import human_value

from rlperf.gate.exitcodes import GateExit, worst
from rlperf.gate.judge import Finding

_ICON = {"regression": "🔴", "parity": "🔴", "failed": "💥", "skipped-on-head": "🕳️", "missing-on-head": "🕳️",
         "improved": "🟢", "noise": "⚪", "changed": "✏️", "new": "🆕", "still-failing": "⚠️",
         "not-measured": "·", "ok": "✅"}
_HEADLINE = {
    GateExit.OK: "✅ no regression",
    GateExit.REGRESSION: "🔴 regression",
    GateExit.BENCHMARK_FAILURE: "💥 benchmark failure",
    GateExit.COVERAGE_LOSS: "🕳️ coverage loss",
    GateExit.INFRASTRUCTURE: "🛠️ infrastructure error",
}


@dataclass
class Verdict:
    """Everything the gate decided, with enough context to reproduce it."""

    base: str
    head: str
    machine: str
    factor: float
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    config: str | None = None

    @property
    def exit_code(self) -> GateExit:
        if self.errors:
            return GateExit.INFRASTRUCTURE
        return worst(f.exit_code for f in self.findings)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.status] = out.get(f.status, 0) + 1
        return dict(sorted(out.items()))


def to_json(v: Verdict) -> str:
    code = v.exit_code
    return json.dumps({
        "schema": "rlperf.gate/1",
        "exit_code": int(code), "verdict": code.name.lower(),
        "base": v.base, "head": v.head, "machine": v.machine, "factor": v.factor, "config": v.config,
        "counts": v.counts(), "errors": v.errors, "notes": v.notes,
        "findings": [f.to_dict() for f in v.findings],
    }, indent=2, allow_nan=False)


def _fmt(value, unit) -> str:
    if value is None:
        return "n/a"
    try:
        return human_value(value, unit or "unit")
    except (TypeError, ValueError):
        return f"{value:.4g}"


def _row(f: Finding) -> str:
    ratio = "∞" if f.ratio == float("inf") else ("" if f.ratio is None else f"{f.ratio:.2f}×")
    rule = f"≤ {f.tolerance:g}" if f.direction == "tolerance" else f"{f.direction} better, ×{f.factor:g}"
    return (f"| {_ICON.get(f.status, '')} {f.status} | `{f.name}` | {_fmt(f.base, f.unit)} | "
            f"{_fmt(f.head, f.unit)} | {ratio} | {rule} | {f.method} {f.detail} |")


def to_markdown(v: Verdict, *, reproduce: str | None = None) -> str:
    """A PR comment: headline, blocking and notable rows first, everything else folded away."""
    code = v.exit_code
    lines = [f"## rlperf gate: {_HEADLINE[code]} (exit {int(code)})", "",
             f"base `{v.base[:12]}` → head `{v.head[:12]}` on machine `{v.machine}`; default factor "
             f"{v.factor:g}; a regression needs ratio > factor **and** significance (asv's Mann–Whitney rule).", ""]
    lines += [f"> **error:** {e}" for e in v.errors]
    lines += [f"> note: {n}" for n in v.notes]
    if v.findings:
        lines += ["", "counts: " + ", ".join(f"{k} {n}" for k, n in v.counts().items()), ""]
    header = ["| status | benchmark | base | head | worse× | rule | test |", "|---|---|---|---|---|---|---|"]
    notable = [f for f in v.findings if f.status not in ("ok", "not-measured")]
    quiet = [f for f in v.findings if f.status in ("ok", "not-measured")]
    notable.sort(key=lambda f: (-int(f.exit_code), f.status, f.name))
    if notable:
        lines += header + [_row(f) for f in notable]
    if quiet:
        lines += ["", f"<details><summary>{len(quiet)} unchanged points</summary>", ""]
        lines += header + [_row(f) for f in quiet] + ["", "</details>"]
    if reproduce:
        lines += ["", "Reproduce locally:", "", "```bash", reproduce, "```"]
    return "\n".join(lines) + "\n"


__all__ = ["Verdict", "to_json", "to_markdown"]
