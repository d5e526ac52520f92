"""A gate.verdict.Verdict as a PR comment (Markdown) and as JSON; formatters only: they return text or data, callers write them.

The comment leads with what blocks or changed and folds everything unchanged into one compact table,
so it fits on a screen when nothing is wrong; points measured on neither commit are only counted.
"""

from __future__ import annotations

import json
import math

from asv.util import human_value

from rlperf.gate.exitcodes import GateExit
from rlperf.gate.verdict import Finding, Verdict
from rlperf.report.tables import markdown_table

_ICON = {"regression": "🔴", "parity": "🔴", "failed": "💥", "skipped-on-head": "🕳️", "missing-on-head": "🕳️",
         "changed": "✏️", "improved": "🟢", "noise": "⚪", "new": "🆕", "changed-accepted": "✏️✔",
         "still-failing": "⚠️", "not-measured": "·", "ok": "✅", "advisory": "📢", "unjudgeable": "🛠️"}
_HEADLINE = {
    GateExit.OK: "✅ no regression",
    GateExit.REGRESSION: "🔴 regression",
    GateExit.BENCHMARK_FAILURE: "💥 benchmark failure",
    GateExit.COVERAGE_LOSS: "🕳️ coverage loss",
    GateExit.INFRASTRUCTURE: "🛠️ infrastructure error",
    GateExit.CHANGED_BENCHMARK: "✏️ benchmark changed",
}
# the order of the leading table: what blocks (by exit code), then what changed
_LEAD_ORDER = ("unjudgeable", "regression", "parity", "failed", "skipped-on-head", "missing-on-head", "changed", "improved",
               "noise", "new", "changed-accepted", "still-failing")
_QUIET = ("ok",)
_UNLISTED = ("not-measured",)
# too noisy to gate (gate.thresholds): listed in a section of their own with the reason, never blocking
_ADVISORY = ("advisory",)


_QUICK_HEADLINE = " — QUICK LOOK, not CI's settings"
_QUICK_NOTE = ("> ⚠️ **Quick look (`--quick`): 1 pass, no paired sampling. This is NOT what CI runs**; its misses "
               "and false alarms are far more likely. Run without `--quick` (the profile's passes and paired "
               "sampling) before trusting the verdict.")


def to_dict(v: Verdict) -> dict:
    code = v.exit_code
    return {
        "schema": "rlperf.gate/1",
        "exit_code": int(code), "verdict": code.name.lower(),
        "base": v.base, "head": v.head, "machine": v.machine, "factor": v.factor, "config": v.config,
        "mode": v.mode, "host": v.host, "accepted_changed": list(v.accepted), "profile": v.profile, "quick": v.quick,
        "head_working_tree": list(v.working_tree) if v.working_tree else None,
        "gated": v.gated, "counts": v.counts(), "errors": v.errors, "failures": v.failures, "notes": v.notes,
        "findings": [f.to_dict() for f in v.findings],
        "advisory": [{"name": f.name, "ratio": f.ratio if f.ratio is None or math.isfinite(f.ratio) else None,
                      "reason": f.detail} for f in v.findings if f.status in _ADVISORY],
    }


def to_json(v: Verdict) -> str:
    return json.dumps(to_dict(v), indent=2, allow_nan=False)


def _fmt(value, unit) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    try:
        return human_value(value, unit or "unit")
    except (TypeError, ValueError):
        return f"{value:.4g}"


def _ratio(f: Finding) -> str:
    return "∞" if f.ratio == math.inf else ("" if f.ratio is None else f"{f.ratio:.2f}×")


# the three tables of the comment: what blocks or changed, the advisory points, the folded unchanged ones
_LEAD = (["status", "benchmark", "base", "head", "worse×", "rule", "test"], "llrrrll")
_ADVISORY_TABLE = (["benchmark", "base", "head", "worse×", "why not gated"], "lrrrl")
_QUIET_TABLE = (["benchmark", "base", "head", "worse×"], "lrrr")


def _values(f: Finding) -> list[str]:
    return [f"`{f.name}`", _fmt(f.base, f.unit), _fmt(f.head, f.unit), _ratio(f)]


def _lead_row(f: Finding) -> list[str]:
    rule = f"≤ {f.tolerance:g}" if f.direction == "tolerance" else f"{f.direction} better, ×{f.factor:g}"
    return [f"{_ICON.get(f.status, '')} {f.status}", *_values(f), rule, f"{f.method} {f.detail}"]


def _table(spec: tuple[list[str], str], rows: list[list[str]]) -> list[str]:
    headers, align = spec
    return markdown_table(headers, rows, align=align)


def _paths(paths, shown: int = 5) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(f"`{p}`" for p in paths[:shown]) + more


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _headline(v: Verdict) -> str:
    """What the exit code says, and how many points it rests on: a verdict that gated no point (every
    compared point advisory, say) says "nothing gated" instead of "no regression", though it exits 0."""
    code, advisory = v.exit_code, sum(1 for f in v.findings if f.status in _ADVISORY)
    title = "📢 nothing gated" if code == GateExit.OK and not v.gated else _HEADLINE[code]
    counted = (f": {_plural(v.gated, 'point')} gated" + (f", {advisory} advisory (never blocking)" if advisory else "")
               if v.findings else "")
    return f"## rlperf gate: {title} (exit {int(code)}){counted}" + (_QUICK_HEADLINE if v.quick else "")


def to_markdown(v: Verdict, *, reproduce: str | None = None) -> str:
    """A PR comment: headline, what blocks or changed, then one folded compact table of the rest."""
    lines = [_headline(v),
             "", *([_QUICK_NOTE, ""] if v.quick else []),
             f"base `{v.base[:12]}` → head `{v.head[:12]}` on machine `{v.machine}`; default factor {v.factor:g}"
             + (f"; {v.mode}" if v.mode else "") + ".",
             *([f"host: {v.host}."] if v.host else []), ""]
    if v.working_tree:
        lines += [f"> **head is the working tree**, not commit `{v.head[:12]}`: measured with its uncommitted changes "
                  f"(`--allow-dirty`: {_paths(v.working_tree)}); its results were not stored."]
    lines += [f"> **error:** {e}" for e in v.errors]
    lines += [f"> **benchmark failure:** {e}" for e in v.failures]
    if v.accepted:
        lines += [f"> **accepted changed benchmarks** (`--accept-changed`): {', '.join(f'`{p}`' for p in v.accepted)}"]
    lines += [f"> note: {n}" for n in v.notes]
    listed = [f for f in v.findings if f.status not in _UNLISTED]
    if v.findings:
        counts = {k: n for k, n in v.counts().items() if k not in _UNLISTED}
        lines += ([""] if lines[-1] else []) + ["counts: " + (", ".join(f"{k} {n}" for k, n in counts.items())
                                                           or "none"), ""]
    advisory = sorted((f for f in listed if f.status in _ADVISORY), key=lambda f: f.name)
    lead = sorted((f for f in listed if f.status not in _QUIET + _ADVISORY),
                  key=lambda f: (_LEAD_ORDER.index(f.status) if f.status in _LEAD_ORDER else 99, f.name))
    quiet = sorted((f for f in listed if f.status in _QUIET), key=lambda f: f.name)
    if lead:
        lines += _table(_LEAD, [_lead_row(f) for f in lead])
    if advisory:
        lines += ["", f"### 📢 Advisory points: measured, not gated ({len(advisory)})", "",
                  "Their measured run-to-run noise needs a wider factor than the gate's ceiling "
                  "(`advisory_above`, docs/gate.md): a change here never blocks, so read these numbers yourself.", ""]
        lines += _table(_ADVISORY_TABLE, [[*_values(f), f.detail] for f in advisory])
    if quiet:
        lines += ["", f"<details><summary>{len(quiet)} unchanged point(s)</summary>", ""]
        lines += _table(_QUIET_TABLE, [_values(f) for f in quiet]) + ["", "</details>"]
    if reproduce:
        lines += ["", "Reproduce locally:", "", "```bash", reproduce, "```"]
    return "\n".join(lines) + "\n"


__all__ = ["to_dict", "to_json", "to_markdown"]
