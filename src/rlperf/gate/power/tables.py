"""The power study's tables: per arm, detection and false alarms with 95 % Wilson intervals, as JSON rows
and Markdown."""

from __future__ import annotations

import math
import re
import statistics

from rlperf.report.tables import markdown_table


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion hits/n ((0, 1) for n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def cv(values) -> float | None:
    """Coefficient of variation (stdev / mean) of `values`, None with fewer than two."""
    values = [v for v in values if v is not None]
    if len(values) < 2 or statistics.mean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.mean(values)


def summarize(arms: list[dict], trials: list[dict], injected: str) -> list[dict]:
    """Per arm: detection (injected points flagged), false alarms per unchanged point and per run."""
    pattern = re.compile(injected)
    rows = []
    for arm in arms:
        mine = [t for t in trials if t["arm"] == arm["arm"]]
        hits = n_inj = alarms = n_other = runs_alarmed = 0
        ratios, base_medians = [], {}
        for t in mine:
            run_alarm = False
            for name, p in t["points"].items():
                flagged = p["status"] == "regression"
                base_medians.setdefault(name, []).append(p["base"])
                if arm["size"] > 0 and pattern.search(name):
                    n_inj, hits = n_inj + 1, hits + flagged
                    ratios.append(p["ratio"])
                else:
                    n_other, alarms = n_other + 1, alarms + flagged
                    run_alarm |= flagged
            runs_alarmed += run_alarm
        cvs = {name: cv(v) for name, v in base_medians.items()}
        rows.append({
            "arm": arm["arm"], "nominal_size": arm["size"], "steps": arm["steps"], "trials": len(mine),
            "detection": None if arm["size"] == 0 else {
                "hits": hits, "n": n_inj, "rate": hits / n_inj if n_inj else None, "wilson95": wilson(hits, n_inj)},
            "achieved_median_ratio": statistics.median(r for r in ratios if r is not None) if ratios else None,
            "false_alarms_per_point": {"hits": alarms, "n": n_other, "rate": alarms / n_other if n_other else None,
                                       "wilson95": wilson(alarms, n_other)},
            "false_alarms_per_run": {"hits": runs_alarmed, "n": len(mine),
                                     "rate": runs_alarmed / len(mine) if mine else None,
                                     "wilson95": wilson(runs_alarmed, len(mine))},
            "cv_of_base_medians": {k: v for k, v in sorted(cvs.items())},
            "samples_per_point": sorted({s for t in mine for s in t["samples"]}),
            "seconds_per_gate_run": (statistics.median(t["seconds"] for t in mine)
                                     if mine and all(t["seconds"] is not None for t in mine) else None),
        })
    return rows


def _short(name: str) -> str:
    """bench_env.EnvFused.time_fused('probe', 8192, 2) -> probe 8192/2."""
    m = re.search(r"\('([^']+)', (\d+), (\d+)\)", name)
    return f"{m.group(1)} {m.group(2)}/{m.group(3)}" if m else name


def _pct(cell: dict | None) -> str:
    if not cell or cell["rate"] is None:
        return "n/a"
    lo, hi = cell["wilson95"]
    return f"{cell['rate']:.1%} ({cell['hits']}/{cell['n']}; 95 % CI {lo:.1%}–{hi:.1%})"


def to_markdown(doc: dict) -> str:
    design = (f"block design: {doc['blocks']} block(s) of one gate session per arm with {doc['passes_per_block']} "
              "kept passes, cut into disjoint trials of k passes" if doc.get("blocks")
              else f"{doc['passes']} interleaved passes per gate run")
    if doc.get("paired_seconds"):
        design = (f"paired block design: {doc['blocks']} block(s) of one gate session per arm (1 asv pass, then "
                  f"paired sampling), each point's pairs cut into {doc['trials_per_block']} disjoint trials of "
                  f"about {doc['paired_seconds']:g} s from {doc.get('restarts_per_trial', 1)} fresh pair(s) of worker "
                  "processes each (k 0 in the table = paired; `0 + confirm@K`: a trial's flagged points, or with "
                  "`screen S` those above 1 + S x (factor - 1), judged again with the pairs of the trial K later "
                  "joined, as `--paired-confirm 1 --paired-screen S` would)")
    lines = ["# Gate detection power", "", f"command: `{doc['command']}`", "",
             f"machine: `{doc['machine']}`; base `{doc['base'][:12]}`; {design}; "
             f"bench `{doc['bench']}`; injected points `{doc['injected']}`", ""]
    rows = []
    for r in doc["arms"]:
        ratio = "" if r["achieved_median_ratio"] is None else f"×{r['achieved_median_ratio']:.3f}"
        secs = "" if r["seconds_per_gate_run"] is None else f"{r['seconds_per_gate_run']:.0f}"
        factor = r.get("factor") or doc.get("factor") or "gate.toml"
        k = r.get("k", doc.get("passes"))
        if r.get("confirm"):
            k = f"{k} + confirm@{r['confirm']}" + (f" screen {r['screen']:g}" if r.get("screen", 1.0) < 1 else "")
        rows.append([r["arm"], k, factor, r["steps"], r["trials"], _pct(r["detection"]), ratio,
                     _pct(r["false_alarms_per_point"]), _pct(r["false_alarms_per_run"]),
                     ",".join(map(str, r["samples_per_point"])), secs])
    lines += markdown_table(["arm", "k", "factor", "steps", "trials", "detection", "achieved median ratio",
                             "false alarms / point", "false alarms / run", "samples/point", "s per gate run"], rows,
                            align="llrrrlrllrr")
    null = next((r for r in doc["arms"] if r["arm"] == "null"), None)
    if null and null["cv_of_base_medians"]:
        lines += ["", "Coefficient of variation of the base medians across null trials:", ""]
        lines += markdown_table(["point", "CV"], [[f"`{k}`", "n/a" if v is None else f"{v:.2%}"]
                                                  for k, v in null["cv_of_base_medians"].items()], align="lr")
    if doc.get("per_pass_ratios"):
        what = ("Per-block ratios head/base (blocks of paired samples: the noise each trial's median works against):"
                if doc.get("paired_seconds") else
                "Single-pass ratios head/base (the noise each trial's median of k works against):")
        rows = []
        for arm, points in doc["per_pass_ratios"].items():
            for name, ratios in sorted(points.items()):
                above = {f: sum(r > f for r in ratios) / len(ratios) for f in (1.05, 1.10)}
                spread = cv(ratios)
                rows.append([arm, f"`{name}`", len(ratios), f"×{statistics.median(ratios):.3f}",
                             "n/a" if spread is None else f"{spread:.1%}", f"{above[1.05]:.1%}", f"{above[1.10]:.1%}"])
        lines += ["", what, ""]
        lines += markdown_table(["arm", "point", "passes", "median", "CV", "share above ×1.05", "share above ×1.10"],
                                rows, align="llrrrrr")
    if doc.get("sessions"):
        lines += ["", "Sessions (one real `rlperf gate --run` each; the median of its per-pass ratios per point "
                  "shows what more passes converge to in that session):", ""]
        rows = [[x["block"], x["arm"], x["exit_code"], f"{x['seconds']:.0f}", f"{x['loadavg_before'][0]:.2f}",
                 f"{x['loadavg_after'][0]:.2f}",
                 ", ".join(f"{_short(n)} ×{v:.3f}" for n, v in sorted(x.get("median_pass_ratio", {}).items()))]
                for x in doc["sessions"]]
        lines += markdown_table(["block", "arm", "gate exit", "seconds", "load before", "load after",
                                 "median per-pass ratio"], rows, align="rlrrrrl")
    return "\n".join(lines) + "\n"


HEADLINE_COLUMNS = ("host (machine; date)", "point", "design (one gate run)", "factor", "step", "step caught",
                    "false alarms / unchanged point", "folder")


def _cell(cell: dict | None) -> str:
    if not cell or cell["rate"] is None:
        return "n/a"
    lo, hi = cell["wilson95"]
    return f"{cell['rate']:.1%} ({cell['hits']}/{cell['n']}; {lo:.1%}–{hi:.1%})"


def headline_rows(doc: dict, folder: str, factor: float, confirm: int = 1, screen: float = 0.6,
                  null_doc: dict | None = None, null_folder: str = "") -> list[list[str]]:
    """docs/gate.md's power table rows of one paired study (power.json): per injected arm, the K `confirm`
    cell at `factor` (what a real `--paired-confirm 1 --paired-screen S` run gets), the step the arm
    achieved in the same run (median paired ratio of its trials, before any confirming round) and the
    null arm's false alarms in the same cell (from `null_doc`, a `--null-only` study of the same point,
    when given). Nothing typed: every figure is the study's."""
    if not doc.get("paired_seconds"):
        raise ValueError(f"{folder}: headline rows are for paired studies (--paired-seconds)")
    rows = doc["arms"]

    def row(arm: str, k_confirm: int, k_screen: float, among=None) -> dict | None:
        return next((r for r in (among or rows) if r["arm"] == arm and r["factor"] == factor
                     and r.get("confirm", 0) == k_confirm and (k_confirm == 0 or r.get("screen", 1.0) == k_screen)), None)

    host = doc.get("host") or {}
    date = (host.get("started") or "")[:10]
    where = (f"{host.get('cpu', '?')}, {host.get('cores_usable', '?')} cores (`{host.get('name', doc['machine'])}`, "
             f"CPU flags `{host.get('cpu_flags_sha256', '?')}`; {date})")
    design = (f"{doc['restarts_per_trial']} worker pair(s), {doc['paired_seconds']:g} s of pairs; "
              + (f"a confirming round K {confirm}, screen {screen:g}" if confirm else "no confirming round")
              + f"; {doc['trials_per_block']} trials per arm cut from one session")
    if null_doc is not None and null_doc.get("bench") != doc.get("bench"):
        raise ValueError(f"{folder}: the null study measured {null_doc.get('bench')!r}, not {doc.get('bench')!r}")
    # an arm whose session gave no pairs (gate fell back to its one pass; power.json before the study left
    # such sessions out) has no paired trials: no row, and its null comes from null_doc or is n/a
    paired_arms = {x["arm"] for x in doc.get("sessions", []) if x.get("median_pass_ratio")}
    null = row("null", confirm, screen, null_doc["arms"] if null_doc is not None else None)
    if null_doc is None and "null" not in paired_arms:
        null = None
    if null_doc is not None:
        folder = f"{folder}, null: {null_folder}"
    out = []
    for arm in (a for a in doc["plan"] if a["size"] > 0 and a["arm"] in paired_arms):
        got, plain = row(arm["arm"], confirm, screen), row(arm["arm"], 0, 1.0)
        if got is None or plain is None:
            raise ValueError(f"{folder}: no cell for {arm['arm']} at factor {factor} (confirm {confirm})")
        step = plain["achieved_median_ratio"]
        point = re.sub(r"^bench_\w+\.", "", doc["bench"]).replace("\\", "")
        out.append([where, f"`{point}`", design, f"{factor:g}",
                    f"x{step:.3f} (nominal {arm['size']:.0%}, {arm['steps']} steps)" if step else "n/a",
                    _cell(got["detection"]), _cell(null["false_alarms_per_point"]) if null else "n/a", f"`{folder}`"])
    return out


__all__ = ["HEADLINE_COLUMNS", "cv", "headline_rows", "summarize", "to_markdown", "wilson"]
