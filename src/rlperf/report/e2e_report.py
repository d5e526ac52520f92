"""Summaries and report.md of an `rlperf e2e` document; every number derives from its raw samples.

Definitions (docs/e2e.md has the full text):
- iteration: synchronous = one collector sync chunk then one learner phase; async = one learner
  iteration (wait for a new chunk, `updates_per_step` updates, weight post).
- exposed replay time (a): median learner wait for its batch (CUDA events; wall clock on CPU);
  (b): median learner phase with replay batches minus the same with a resident batch, same run.
- collector wait: the learner's wait for new collector data, and the collector's wait for the learner.
- throughput: env steps/s = num_envs * env_steps_per_sync * iterations / their summed time;
  learner updates/s = updates_per_step * iterations / the same time.
"""

from __future__ import annotations

import statistics

from rlperf.report.tables import markdown_table

COLLECTOR_PARTS = ("physics", "state_read", "noise", "inputs", "update_state", "policy", "replay_add", "reset_done",
                   "other")


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)


def iteration_parts(row: dict, schedule: str) -> dict[str, float]:
    """Where one iteration's time went; `loop other` is what no timer inside the iteration covered."""
    if schedule == "synchronous":
        parts = {f"collector {k}": float(row["collector_phases"].get(k, 0.0)) for k in COLLECTOR_PARTS}
        timed_collector = row["collector_ms"]
        parts.update({"batch wait": row["batch_wait_ms"], "SAC updates": row["update_ms"],
                      "weight sync": row["weight_sync_ms"]})
        covered = timed_collector + row["batch_wait_ms"] + row["update_ms"] + row["weight_sync_ms"]
        parts["collector untimed"] = timed_collector - sum(parts[f"collector {k}"] for k in COLLECTOR_PARTS)
    else:
        parts = {"wait for collector": row["learner_wait_ms"], "batch wait": row["batch_wait_ms"],
                 "SAC updates": row["update_ms"]}
        covered = sum(parts.values())
    parts["loop other"] = row["iteration_ms"] - covered
    return parts


def point_summary(point: dict) -> dict:
    rep, res = point["samples"]["replay"], point["samples"]["resident"]
    total_s = sum(r["iteration_ms"] for r in rep) / 1e3
    parts = [iteration_parts(r, point["schedule"]) for r in rep]
    return {
        "iteration_ms": _median(rep, "iteration_ms"),
        "resident_iteration_ms": _median(res, "iteration_ms"),
        "learner_ms": _median(rep, "learner_ms"),
        "resident_learner_ms": _median(res, "learner_ms"),
        "exposed_replay_wait_ms": _median(rep, "batch_wait_ms"),
        "exposed_replay_vs_resident_ms": _median(rep, "learner_ms") - _median(res, "learner_ms"),
        "iteration_vs_resident_ms": _median(rep, "iteration_ms") - _median(res, "iteration_ms"),
        "update_ms": _median(rep, "update_ms"),
        "weight_sync_ms": _median(rep, "weight_sync_ms"),
        "learner_wait_for_collector_ms": _median(rep, "learner_wait_ms"),
        "collector_wait_for_learner_ms": _median(rep, "collector_wait_ms"),
        "env_steps_per_s": point["num_envs"] * point["env_steps_per_sync"] * len(rep) / total_s,
        "learner_updates_per_s": point["updates_per_step"] * len(rep) / total_s,
        "breakdown_ms": {k: statistics.median(p[k] for p in parts) for k in parts[0]},
        "iterations": len(rep),
    }


def ab_summary(entry: dict) -> dict:
    return {k: statistics.median(v) for k, v in entry["phases_ms"].items()}


def summarize(doc: dict) -> dict:
    """Per-point summaries, host -> best placement speedups, fused vs numpy collector speedups."""
    for point in doc["points"]:
        point["summary"] = point_summary(point)
    speedups = []
    groups: dict[tuple, list[dict]] = {}
    for p in doc["points"]:
        groups.setdefault((p["num_envs"], p["schedule"]), []).append(p)
    for (num_envs, schedule), pts in groups.items():
        hosts = [p for p in pts if p["placement"] == "host"]
        best = min(pts, key=lambda p: p["summary"]["iteration_ms"])
        if hosts:
            host = min(hosts, key=lambda p: p["summary"]["iteration_ms"])
            speedups.append({"num_envs": num_envs, "schedule": schedule,
                             "host": f"host/{host['prefetch']}", "best": f"{best['placement']}/{best['prefetch']}",
                             "iteration_speedup": host["summary"]["iteration_ms"] / best["summary"]["iteration_ms"]})
    kernel_speedups = []
    by_envs: dict[int, dict[str, dict]] = {}
    for entry in doc.get("collector_ab", []):
        entry["summary"] = ab_summary(entry)
        by_envs.setdefault(entry["num_envs"], {})[entry["kernel"]] = entry["summary"]
    for num_envs, kernels in sorted(by_envs.items()):
        if "numpy" in kernels and "fused" in kernels and kernels["fused"].get("total"):
            kernel_speedups.append({
                "num_envs": num_envs,
                "collector_step_speedup": kernels["numpy"]["total"] / kernels["fused"]["total"],
                "update_state_speedup": (kernels["numpy"].get("update_state", 0.0)
                                         / kernels["fused"]["update_state"])
                if kernels["fused"].get("update_state") else None})
    doc["speedups"] = {"placement": speedups, "collector_kernel": kernel_speedups}
    return doc


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _point_row(point: dict) -> list[str]:
    s = point["summary"]
    return [f"{point['num_envs']:,}", point["schedule"], point["placement"], point["prefetch"], _f(s["iteration_ms"]),
            _f(s["learner_ms"]), _f(s["exposed_replay_wait_ms"], 3), _f(s["exposed_replay_vs_resident_ms"], 3),
            _f(s["learner_wait_for_collector_ms"]), _f(s["collector_wait_for_learner_ms"]),
            _f(s["env_steps_per_s"], 0), _f(s["learner_updates_per_s"], 1)]


def report_lines(doc: dict) -> list[str]:
    """report.md: machine and command, definitions, the iteration table, the collector A/B, skips."""
    a = doc["args"]
    lines = [f"# rlperf e2e: {a['task']}/{a['sim']}, physics {a['physics']}", "",
             f"- machine: {doc['device_info']}", f"- command: `{doc['command']}`",
             f"- created: {doc['created_at']}; learner device: {doc['learner_device']}",
             f"- iterations: {a['iterations']} replay-fed and {a['iterations']} resident-fed per point, in "
             f"{doc['rounds']} alternating rounds, after {a['warmup_iterations']} warmup iterations of each",
             f"- prefill: {doc['points'][0]['prefill'] if doc['points'] else 'n/a'}", "",
             "Terms (full definitions in docs/e2e.md): *iteration* = synchronous: one collector sync chunk + "
             "one learner phase; async: one learner iteration. *Exposed replay (a)* = the learner's wait for "
             "its batch; *(b)* = learner phase with replay batches minus with a resident batch. *Collector wait* "
             "= learner waiting for data / collector waiting for the learner. Medians of raw samples.", "",
             "## Iteration per placement", ""]
    lines += markdown_table(
        ["envs", "schedule", "placement", "prefetch", "iteration ms", "learner ms", "exposed (a) ms", "exposed (b) ms",
         "learner waits ms", "collector waits ms", "env steps/s", "updates/s"],
        [_point_row(p) for p in doc["points"]], align="rlllrrrrrrrr")
    if doc["speedups"]["placement"]:
        lines += ["", "## Host to best placement", ""]
        lines += markdown_table(["envs", "schedule", "host", "best", "iteration speedup"],
                                [[f"{s['num_envs']:,}", s["schedule"], s["host"], s["best"],
                                  f"{_f(s['iteration_speedup'])}x"] for s in doc["speedups"]["placement"]],
                                align="rlllr")
    if doc.get("collector_ab"):
        lines += ["", "## Collector step, update_state kernel A/B (median ms per step)", ""]
        lines += markdown_table(["envs", "kernel", *COLLECTOR_PARTS, "total"],
                                [[f"{e['num_envs']:,}", e["kernel"],
                                  *(_f(e["summary"].get(k), 3) for k in (*COLLECTOR_PARTS, "total"))]
                                 for e in doc["collector_ab"]],
                                align="rl" + "r" * (len(COLLECTOR_PARTS) + 1))
        for k in doc["speedups"]["collector_kernel"]:
            lines.append(f"\nfused vs numpy at {k['num_envs']:,} envs: collector step "
                         f"{_f(k['collector_step_speedup'])}x, update_state {_f(k['update_state_speedup'])}x")
    if doc["skipped"]:
        lines += ["", "## Skipped", ""] + [f"- {s['placement']} at {s['num_envs']:,} envs: {s['reason']}"
                                          for s in doc["skipped"]]
    lines += ["", f"Learner: {doc['learner_note']}"]
    return lines
