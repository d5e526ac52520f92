"""The noise chart: ms per step of noise over env counts (log2 x), one panel per distribution."""

from __future__ import annotations

from pathlib import Path

from rlperf.report.figures import env_count_panel, label_points, pyplot, save_sweep

CHART_NAME = "noise_{task}.png"


def plot_noise(doc: dict, path: str | Path) -> Path:
    """Best thread count per (variant, envs) as a line, annotated with its thread count; atomic write."""
    plt = pyplot()

    meta = doc["meta"]
    dists = [d for d in meta["dists"] if any(r["dist"] == d for r in doc["results"])] or meta["dists"]
    fig, axes = plt.subplots(1, len(dists), figsize=(6.5 * len(dists), 5.2), squeeze=False)
    for ax, dist in zip(axes[0], dists):
        best: dict[str, dict[int, dict]] = {}
        for r in doc["results"]:
            if r["dist"] == dist:
                cur = best.setdefault(r["variant"], {}).get(r["num_envs"])
                if cur is None or r["median_ms"] < cur["median_ms"]:
                    best[r["variant"]][r["num_envs"]] = r
        for variant, points in best.items():
            xs = sorted(points)
            ys = [points[x]["median_ms"] for x in xs]
            ax.plot(xs, ys, marker="o", label=variant)
            label_points(ax, ((x, y, f"{points[x]['threads']}t") for x, y in zip(xs, ys)))
        ax.set_yscale("log")
        env_count_panel(ax, xlabel="num_envs (64 values per env)", ylabel="ms per step (median, best thread count)",
                        title=dist)
    return save_sweep(fig, f"actor-noise generation, {meta['task']} columns ({meta.get('threading_layer', '?')})",
                      meta, path)
