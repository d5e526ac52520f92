"""The env summary chart: speedup vs numpy and parallel efficiency over env counts (log2 x axis)."""

from __future__ import annotations

from pathlib import Path

from rlperf.report.figures import env_count_panel, label_points, pyplot, save_sweep

CHART_NAME = "{task}_summary.png"


def _series(results: list[dict], key: str) -> dict[tuple[str, int], list[tuple[int, float]]]:
    series: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for r in results:
        if r.get(key) is not None:
            series.setdefault((r["profile"], r["threads"]), []).append((r["num_envs"], r[key]))
    return {k: sorted(v) for k, v in sorted(series.items())}


def plot_env(doc: dict, path: str | Path) -> Path:
    """Write the two-panel PNG (dpi 150) for an rlperf.env document; atomic like the JSON."""
    plt = pyplot()

    meta = doc["meta"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    panels = (("speedup_vs_numpy", "speedup vs numpy (x, median)", "speedup vs numpy"),
              ("parallel_efficiency", "parallel efficiency (speedup vs 1 thread / threads)",
               "parallel efficiency"))
    for ax, (key, ylabel, title) in zip(axes, panels):
        for (profile, threads), points in _series(doc["results"], key).items():
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", label=f"{profile}, {threads}t")
            label_points(ax, ((x, y, f"{threads}t") for x, y in points))
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        env_count_panel(ax, xlabel="num_envs", ylabel=ylabel, title=title)
    return save_sweep(fig, f"{meta['task']} fused update_state (Numba, {meta.get('threading_layer', '?')}) vs numpy",
                      meta, path)
