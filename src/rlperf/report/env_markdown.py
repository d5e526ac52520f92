"""report.md for an rlperf.env document: what was run, where, and the per-case numbers."""

from __future__ import annotations

from rlperf.report.tables import markdown_table


def _f(value, fmt: str = "{:.3f}") -> str:
    return "–" if value is None else fmt.format(value)


def render(doc: dict, chart_name: str | None = None) -> str:
    meta = doc["meta"]
    lines = [
        f"# {meta['task']}: fused Numba update_state vs numpy",
        "",
        f"- device: {meta.get('device_line', '')}",
        f"- machine: `{meta['machine'].get('name')}`; numba {meta['machine'].get('numba')}, "
        f"numpy {meta['machine'].get('numpy')}, python {meta['machine'].get('python')}",
        f"- threading layer: **{meta.get('threading_layer')}** (tbb preloaded: "
        f"{meta.get('threading', {}).get('tbb_preloaded')})",
        f"- compile (first call at 1 thread, not in any timing): {_f(meta.get('compile_ms'), '{:.0f}')} ms "
        f"({meta.get('compile_source')})",
        f"- iters {meta['iters']}, warmup {meta['warmup']}, seed {meta['seed']}; times are medians of "
        f"perf_counter samples, ratios use medians",
        f"- load average at start / end: {meta.get('loadavg_start')} / {meta.get('loadavg_end')}",
        f"- timestamp (UTC): {meta.get('timestamp_utc')}",
        "",
        "Scope per profile: " + "; ".join(f"`{p}`: {s}" for p, s in meta.get("scope", {}).items()),
        "",
    ]
    if chart_name:
        lines += [f"![summary]({chart_name})", ""]
    rows = []
    for r in doc["results"]:
        p = r["parity"]
        obs = max(p["max_abs_actor_obs_diff"], p["max_abs_critic_obs_diff"])
        rows.append([r["profile"], r["num_envs"], r["threads"], _f(r["numpy_ms"]), _f(r["numba_ms"]),
                     _f(r["speedup_vs_numpy"], "{:.2f}"), _f(r["parallel_speedup_vs_numba_1t"], "{:.2f}"),
                     _f(r["parallel_efficiency"], "{:.0%}"), _f(r["env_steps_per_s"], "{:,.0f}"),
                     _f(r.get("memory_floor_ms")), _f(r.get("x_memory_floor"), "{:.1f}"),
                     "ok" if r["parity_ok"] else "FAIL", f"{p['max_abs_reward_diff']:.2e}", f"{obs:.2e}",
                     p["termination_mismatch"]])
    lines += markdown_table(["profile", "envs", "threads", "numpy ms", "numba ms", "speedup", "par. speedup",
                             "efficiency", "env steps/s", "memory floor ms", "x floor", "parity", "max reward diff",
                             "max obs diff", "term. mismatch"], rows, align="lrrrrrrrrrrlrrr")
    lines += ["", "Memory floor: bytes touched per env x envs over the host copy rate (read + write) measured in "
              "the same run by a Numba copy at the case's own thread count, over a buffer of the case's own footprint "
              "(so cache-resident cases are bounded by a cache-resident copy); x floor = numba ms / floor ms.",
              ""]
    if doc.get("skipped"):
        lines += ["", "## Skipped", ""]
        lines += [f"- {s['profile']} / {s['num_envs']} envs / {s['threads']} threads: {s['reason']}"
                  for s in doc["skipped"]]
    lines.append("")
    return "\n".join(lines)
