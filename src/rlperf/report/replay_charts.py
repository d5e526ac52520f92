"""Replay charts in the reference tools' conventions (docs/workloads.md A10): Agg backend, dpi 170."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rlperf.replay.metrics import COLOURS, GPU_SAMPLE  # noqa: E402
from rlperf.report import replay_table as rt  # noqa: E402
from rlperf.atomic import save_figure  # noqa: E402
from rlperf.report.replay_placement_chart import placement_chart  # noqa: E402

EXTRA_COLOURS = ("#B279A2", "#72B7B2", "#EECA3B", "#9D755D", "#BAB0AC", "#FF9DA6", "#439894", "#83BCB6",
                 "#D67195", "#8F6D31", "#79706E", "#1F77B4")
DPI = 170
MEDIAN_LOG = "Median wall time (ms, log scale)"


def _fmt(v: float) -> str:
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def _label_of(doc: dict) -> str:
    return f"{doc['args']['task']}/{doc['args']['sim']}"


def _device_line(doc: dict) -> str:
    return doc.get("device_info", "")


def component_breakdown(doc: dict, path: Path) -> Path:
    """The reference's chart: four bars per capacity (CPU sample, H2D, CPU sample+H2D, GPU sample) of the
    reference quantities only; every other placement is in the per-placement chart."""
    gpus_list = rt.gpu_counts(doc)
    series = rt.REFERENCE_SERIES
    config_capacity_rows = doc["workload"]["capacity_rows"]
    ncols = 2 if len(gpus_list) > 1 else 1
    nrows = -(-len(gpus_list) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols + 2, 4.8 * nrows), squeeze=False)
    width = min(0.18, 0.8 / max(len(series), 1))
    ymax, ymin = 0.0, 0.0
    for ax, gpus in zip(axes.flat, gpus_list):
        all_capacity_rows = rt.capacity_rows_at(doc, gpus)
        labelled = set()
        for k, (placement, metric) in enumerate(series):
            colour = COLOURS[metric] if (placement, metric) in rt.REFERENCE_SERIES else \
                EXTRA_COLOURS[(k - 4) % len(EXTRA_COLOURS)]
            offset = (k - (len(series) - 1) / 2) * width
            for i, capacity_rows in enumerate(all_capacity_rows):
                v = rt.reference_ms(doc, placement, metric, gpus, capacity_rows)
                if v is None:
                    continue
                label = rt.series_label(placement, metric)
                ax.bar(i + offset, v, width, color=colour, label=None if label in labelled else label)
                labelled.add(label)
                ax.text(i + offset, v, _fmt(v), ha="center", va="bottom", fontsize=6, rotation=90)
                ymax = max(ymax, v)
                ymin = min(ymin, v) if ymin else v
        ax.set_title(f"{gpus} GPU(s)")
        ax.set_xticks(range(len(all_capacity_rows)),
                      [rt.capacity_label(rows, config_capacity_rows) for rows in all_capacity_rows], fontsize=8)
        ax.set_ylabel(MEDIAN_LOG)
        ax.set_yscale("log")  # GPU sample is ~1/100 of CPU sample+H2D: on a linear axis its bar is invisible
        ax.grid(axis="y", alpha=0.3, which="both")
    for ax in axes.flat[len(gpus_list):]:
        ax.axis("off")
    for ax in axes.flat[: len(gpus_list)]:
        ax.set_ylim(ymin / 2 if ymin else 1e-3, ymax * 4 or 1)
    handles, labels = _unique_legend(axes.flat[: len(gpus_list)])
    fig.suptitle(f"{_label_of(doc)} replay sampling (medians): CPU sample, H2D, CPU total, GPU sample\n"
                 f"{_device_line(doc)}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.14, 1, 0.95))
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return _save(fig, path)


def _unique_legend(axes):
    """One legend entry per series across all panels."""
    seen, handles, labels = set(), [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in seen:
                seen.add(label)
                handles.append(handle)
                labels.append(label)
    return handles, labels


def speedup_chart(doc: dict, path: Path) -> Path | None:
    gpus_list = rt.gpu_counts(doc)
    all_capacity_rows = sorted({rows for g in gpus_list for rows in rt.capacity_rows_at(doc, g)})
    values = {(g, rows): rt.speedup(doc, g, rows) for g in gpus_list for rows in all_capacity_rows}
    if not any(values.values()):
        return None
    config_capacity_rows = doc["workload"]["capacity_rows"]
    fig, ax = plt.subplots(figsize=(10.5, 5.6))
    width = 0.8 / max(len(all_capacity_rows), 1)
    for k, capacity_rows in enumerate(all_capacity_rows):
        for i, gpus in enumerate(gpus_list):
            v = values[(gpus, capacity_rows)]
            if v is None:
                continue
            x = i + (k - (len(all_capacity_rows) - 1) / 2) * width
            ax.bar(x, v, width, color=EXTRA_COLOURS[k % len(EXTRA_COLOURS)],
                   label=rt.capacity_label(capacity_rows, config_capacity_rows).replace("\n", " ") if i == 0 else None)
            ax.text(x, v, f"{v:.1f}x", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(gpus_list)), [str(g) for g in gpus_list])
    ax.set_xlabel("GPU count")
    ax.set_ylabel("Speedup (x)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title="Replay capacity")
    ax.set_title(f"{_label_of(doc)} CPU sample+H2D divided by GPU-resident sample (medians)\n{_device_line(doc)}",
                 fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def gpu_sample_chart(doc: dict, path: Path) -> Path | None:
    placements = sorted({r["placement"] for r in doc["results"] if GPU_SAMPLE in r["timings"]})
    if not placements:
        return None
    config_capacity_rows = doc["workload"]["capacity_rows"]
    all_capacity_rows = sorted({r["capacity_rows"] for r in doc["results"] if GPU_SAMPLE in r["timings"]})
    n = len(all_capacity_rows)
    fig, ax = plt.subplots(figsize=(max(9.0, 1.6 * n + 0.25 * len(placements) * n), 5.5))
    width = 0.8 / len(placements)
    for k, placement in enumerate(placements):
        for i, capacity_rows in enumerate(all_capacity_rows):
            v = rt.median_ms(doc, placement, GPU_SAMPLE, 1, capacity_rows)
            if v is None:
                continue
            x = i + (k - (len(placements) - 1) / 2) * width
            ax.bar(x, v, width, color=EXTRA_COLOURS[k % len(EXTRA_COLOURS)], label=placement if i == 0 else None)
            ax.text(x, v, f"{v:.3f}", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(all_capacity_rows)),
                  [rt.capacity_label(rows, config_capacity_rows) for rows in all_capacity_rows], fontsize=8)
    ax.set_ylabel(MEDIAN_LOG)
    ax.set_yscale("log")  # placements span 0.03-1 ms
    drawn = [p.get_height() for p in ax.patches]
    ax.set_ylim(min(drawn) / 1.5, max(drawn) * 2.5)  # room for the value labels above the tallest bar
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"{_label_of(doc)} GPU-resident replay sample, median per point\n{_device_line(doc)}", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    return save_figure(fig, path, dpi=DPI, bbox_inches="tight")


def write_charts(doc: dict, plot_dir: Path) -> list[Path]:
    made = [component_breakdown(doc, plot_dir / "sac_replay_sampling_component_breakdown.png"),
            speedup_chart(doc, plot_dir / "sac_replay_sampling_speedup.png"),
            gpu_sample_chart(doc, plot_dir / "sac_replay_gpu_sample_wall_time.png"),
            placement_chart(doc, plot_dir / "sac_replay_batch_to_gpu_per_placement.png")]
    return [p for p in made if p is not None]
