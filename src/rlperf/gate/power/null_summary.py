"""What the null-run log says so far: the share of whole gate runs on a null change that flag anything,
the per-point false-alarm rate, which points flagged, and whether the target is met.

A run counts when the gate wrote a verdict; one without (a crash, exit 5 before judging) is listed, never
counted as clean. A run *flags* when its exit code is not 0: on a null change every blocking finding is a
false alarm, whatever its kind. Per point, a false alarm is a gated comparison (gate.verdict.GATED) whose
status blocks (regression or parity); advisory points are not gated and not counted. The target (issue 25:
<= 5 % of runs) is *met* when the Wilson 95 % upper bound is at or below it, *missed* when the lower bound
is above it; in between, the summary says how many more runs with no flag would bring the upper bound
down to it (none flagging: 73 runs in all).
"""

from __future__ import annotations

import statistics

from rlperf.gate.power.tables import wilson
from rlperf.gate.verdict import BLOCKING, GATED

TARGET = 0.05  # share of null runs that may flag anything (issue 25, section 4)
RUNS_ASKED = 30  # null runs the issue asks for


def runs_to_decide(hits: int, n: int, target: float = TARGET, cap: int = 100_000) -> int | None:
    """More runs, none flagging, until the Wilson upper bound of hits/(n + more) is <= target (None past cap)."""
    more = 0
    while wilson(hits, n + more)[1] > target:
        more += 1
        if more > cap:
            return None
    return more


def _cell(hits: int, n: int) -> dict:
    return {"hits": hits, "n": n, "rate": hits / n if n else None, "wilson95": wilson(hits, n)}


def summarize(records: list[dict], target: float = TARGET) -> dict:
    """The log's figures (see the module doc) as a JSON-able document."""
    judged = [r for r in records if r.get("verdict")]
    failed = [r for r in records if not r.get("verdict")]
    flagged = [r for r in judged if r["verdict"]["exit_code"] != 0]
    exits: dict[int, int] = {}
    for r in judged:
        exits[r["verdict"]["exit_code"]] = exits.get(r["verdict"]["exit_code"], 0) + 1
    points: dict[str, dict] = {}
    for r in judged:
        for f in r["verdict"]["findings"]:
            row = points.setdefault(f["name"], {"judged": 0, "false_alarms": 0, "other_blocking": 0, "ratios": []})
            if f["status"] in GATED:
                row["judged"] += 1
                if f["status"] in BLOCKING:
                    row["false_alarms"] += 1
                    row["ratios"].append(f.get("ratio"))
            elif f["status"] in BLOCKING:
                row["other_blocking"] += 1
    per_run = _cell(len(flagged), len(judged))
    lo, hi = per_run["wilson95"]
    if not judged:
        decision = "no run yet"
    elif hi <= target:
        decision = "met"
    elif lo > target:
        decision = "missed"
    else:
        decision = "undecided"
    seconds = [r["seconds"] for r in judged if isinstance(r.get("seconds"), (int, float))]
    hosts: dict[str, int] = {}
    for r in records:
        static = (r.get("host") or {}).get("static") or {}
        key = f"{static.get('cpu', '?')}, {static.get('num_cpu', '?')} CPUs"
        hosts[key] = hosts.get(key, 0) + 1
    return {
        "runs": len(records), "runs_with_verdict": len(judged), "runs_asked": RUNS_ASKED,
        "runs_without_verdict": [{"file": r["file"], "gate_exit": r.get("gate_exit"), "error": r.get("error")}
                                 for r in failed],
        "per_run": per_run, "exit_codes": dict(sorted(exits.items())), "target": target, "decision": decision,
        "more_clean_runs_to_meet": runs_to_decide(len(flagged), len(judged), target) if decision == "undecided" else None,
        "per_point": _cell(sum(p["false_alarms"] for p in points.values()), sum(p["judged"] for p in points.values())),
        "points": dict(sorted(points.items())),
        "flagged_runs": [{"file": r["file"], "exit_code": r["verdict"]["exit_code"],
                          "points": sorted(f["name"] for f in r["verdict"]["findings"] if f["status"] in BLOCKING)}
                         for r in flagged],
        "seconds_per_run": {"median": statistics.median(seconds), "min": min(seconds), "max": max(seconds)}
        if seconds else None,
        "hosts": hosts,
        "sample_points": sorted({r.get("sample_points") for r in judged if r.get("sample_points") is not None}),
    }


def _pct(cell: dict) -> str:
    if cell["rate"] is None:
        return "n/a (nothing counted yet)"
    lo, hi = cell["wilson95"]
    return f"{cell['rate']:.1%} ({cell['hits']}/{cell['n']}; Wilson 95 % {lo:.1%}-{hi:.1%})"


def to_markdown(doc: dict, folder: str) -> str:
    """The summary as Markdown lines (the command prints them; --out-md writes them)."""
    target = f"<= {doc['target']:.0%} of runs"
    verdicts = {"met": f"MET: the 95 % upper bound is within {target}",
                "missed": f"MISSED: even the 95 % lower bound is above {doc['target']:.0%}",
                "no run yet": "not measured: no run with a verdict yet",
                "undecided": f"UNDECIDED: the interval spans {doc['target']:.0%}"
                + (f"; {doc['more_clean_runs_to_meet']} more runs with no flag would bring its upper bound to "
                   f"{doc['target']:.0%}" if doc["more_clean_runs_to_meet"] is not None else "")}
    secs = doc["seconds_per_run"]
    lines = ["# Null gate runs: false alarms of a whole run", "",
             f"log: `{folder}`; {doc['runs']} record(s), {doc['runs_with_verdict']} with a verdict "
             f"(the issue asks for {doc['runs_asked']}); hosts: "
             + ("; ".join(f"{k} ({n})" for k, n in doc["hosts"].items()) or "none"),
             f"sample points gated per run: {', '.join(map(str, doc['sample_points'])) or 'n/a'}; seconds per run "
             + (f"(measured): median {secs['median']:.0f}, {secs['min']:.0f}-{secs['max']:.0f}" if secs else ": n/a"),
             "", f"- runs flagging anything (exit != 0): {_pct(doc['per_run'])}; exit codes "
             + (", ".join(f"{k}: {n}" for k, n in doc["exit_codes"].items()) or "none"),
             f"- target {target}: {verdicts[doc['decision']]}",
             f"- per gated point, false alarms (regression or parity): {_pct(doc['per_point'])}"]
    if len(doc["hosts"]) > 1:
        lines.append("- WARNING: the records come from more than one host; their rates are pooled")
    if doc["runs_without_verdict"]:
        lines.append(f"- runs without a verdict (not counted): "
                     + ", ".join(f"`{r['file']}` (gate exit {r['gate_exit']})" for r in doc["runs_without_verdict"]))
    flagged = {n: p for n, p in doc["points"].items() if p["false_alarms"] or p["other_blocking"]}
    if flagged:
        lines += ["", "| point | runs judged | false alarms | rate | worse× when flagged | other blocking |",
                  "|---|---|---|---|---|---|"]
        for name, p in sorted(flagged.items(), key=lambda kv: (-kv[1]["false_alarms"], kv[0])):
            rate = f"{p['false_alarms'] / p['judged']:.1%}" if p["judged"] else "n/a"
            ratios = ", ".join(f"{r:.3f}" for r in p["ratios"] if r is not None)
            lines.append(f"| `{name}` | {p['judged']} | {p['false_alarms']} | {rate} | {ratios} | {p['other_blocking']} |")
    elif doc["runs_with_verdict"]:
        lines += ["", "No point flagged in any run."]
    return "\n".join(lines) + "\n"


__all__ = ["RUNS_ASKED", "TARGET", "runs_to_decide", "summarize", "to_markdown"]
