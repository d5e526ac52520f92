"""e2e charts: where one iteration's time goes per placement (stacked bars), and the collector step
with the numpy against the fused update_state kernel; every segment carries its value."""

from __future__ import annotations

from pathlib import Path

from rlperf.report.figures import pyplot, save_png

ITERATION_CHART = "e2e_iteration_{schedule}.png"
COLLECTOR_CHART = "e2e_collector_step.png"
MIN_LABEL_SHARE = 0.025  # segments narrower than this share of the widest bar get no inline label


def _stacked(ax, labels: list[str], parts: list[dict[str, float]], totals: list[float], unit: str = "ms"):
    plt = pyplot()
    keys = list(dict.fromkeys(k for p in parts for k in p))
    colours = plt.get_cmap("tab20")(range(len(keys)))
    widest = max(totals) if totals else 1.0
    for j, key in enumerate(keys):
        left = [sum(max(0.0, p.get(k, 0.0)) for k in keys[:j]) for p in parts]
        widths = [max(0.0, p.get(key, 0.0)) for p in parts]
        bars = ax.barh(labels, widths, left=left, color=colours[j], label=key, edgecolor="white", linewidth=0.5)
        for bar, w in zip(bars, widths):
            if w >= MIN_LABEL_SHARE * widest:
                ax.text(bar.get_x() + w / 2, bar.get_y() + bar.get_height() / 2, f"{w:.2f}", ha="center",
                        va="center", fontsize=7)
    for i, total in enumerate(totals):
        ax.text(total, i, f"  {total:.2f} {unit}", va="center", fontsize=8, fontweight="bold")
    ax.set_xlim(0, widest * 1.25)
    ax.invert_yaxis()
    ax.set_xlabel(f"{unit}: each segment the median of its part, the bold label the median iteration")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(True, axis="x", alpha=0.3)


def write_charts(doc: dict, out_dir: str | Path) -> list[Path]:
    """One iteration chart per schedule measured, and the collector A/B chart when it ran."""
    plt = pyplot()

    out_dir, written = Path(out_dir), []
    title = f"{doc['args']['task']}/{doc['args']['sim']}, physics {doc['args']['physics']}\n{doc['device_info']}"
    for schedule in dict.fromkeys(p["schedule"] for p in doc["points"]):
        pts = [p for p in doc["points"] if p["schedule"] == schedule]
        labels = [f"{p['placement']} / {p['prefetch']} ({p['num_envs']:,} envs)" for p in pts]
        fig, ax = plt.subplots(figsize=(12, 1.2 + 0.55 * len(pts)))
        _stacked(ax, labels, [p["summary"]["breakdown_ms"] for p in pts], [p["summary"]["iteration_ms"] for p in pts])
        ax.set_title(f"Where one {schedule} iteration goes, per placement and prefetch\n{title}", fontsize=9)
        written.append(save_png(fig, out_dir / ITERATION_CHART.format(schedule=schedule), bbox_inches="tight"))
    ab = doc.get("collector_ab") or []
    if ab:
        from rlperf.report.e2e_report import COLLECTOR_PARTS

        labels = [f"{e['kernel']} ({e['num_envs']:,} envs)" for e in ab]
        parts = [{k: e["summary"].get(k, 0.0) for k in COLLECTOR_PARTS} for e in ab]
        fig, ax = plt.subplots(figsize=(12, 1.2 + 0.55 * len(ab)))
        _stacked(ax, labels, parts, [e["summary"].get("total", sum(p.values())) for e, p in zip(ab, parts)])
        ax.set_xlabel("ms: each segment the median of its phase, the bold label the median step")
        ax.set_title(f"Collector step: numpy against fused update_state\n{title}", fontsize=9)
        written.append(save_png(fig, out_dir / COLLECTOR_CHART, bbox_inches="tight"))
    return written
