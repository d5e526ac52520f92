"""Per-placement chart: time for one learner batch to reach the GPU, sorted, on a log axis, with each
placement's physical floor marked; bytes per learner iteration beside it.

"Reach the GPU" is the end-to-end pass for host-side placements (gather + H2D, UVA, cache) and the
GPU sample for device-resident ones (the batch is already in HBM). One capacity per chart: the
workload's configured capacity when measured, else the largest measured.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rlperf.replay.metrics import END_TO_END, GPU_SAMPLE, LABELS  # noqa: E402
from rlperf.atomic import save_figure  # noqa: E402

DPI = 170
MIB = 2**20


def batch_to_gpu_rows(doc: dict) -> tuple[int | None, list[dict]]:
    """(capacity_rows, rows sorted by median ms) of the 1-GPU results that report a batch reaching the GPU."""
    results = [r for r in doc["results"] if r["world_size"] == 1
               and (END_TO_END in r["timings"] or GPU_SAMPLE in r["timings"])]
    if not results:
        return None, []
    all_capacity_rows = {r["capacity_rows"] for r in results}
    configured = doc["workload"]["capacity_rows"]
    capacity_rows = configured if configured in all_capacity_rows else max(all_capacity_rows)
    rows = []
    sample_rows = doc["workload"]["sample_rows_per_rank"]
    for r in results:
        if r["capacity_rows"] != capacity_rows:
            continue
        metric = END_TO_END if END_TO_END in r["timings"] else GPU_SAMPLE
        t = r["timings"][metric]
        rows.append({"placement": r["placement"], "metric": metric, "median_ms": t["median_ms"],
                     "floor_ms": t.get("floor_ms"),
                     "batch_bytes": r.get("batch_bytes_per_iteration", sample_rows * r["stored_row_bytes"]),
                     "layout": r.get("layout", "fp32")})
    return capacity_rows, sorted(rows, key=lambda row: row["median_ms"])


def placement_chart(doc: dict, path: Path) -> Path | None:
    capacity_rows, rows = batch_to_gpu_rows(doc)
    if not rows:
        return None
    names = [f"{r['placement']} ({r['layout']})" for r in rows]
    y = range(len(rows))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 0.45 * len(rows) + 2.2), sharey=True,
                                 gridspec_kw={"width_ratios": [2, 1]})
    colours = ["#54A24B" if r["metric"] == GPU_SAMPLE else "#E45756" for r in rows]
    ax.barh(y, [r["median_ms"] for r in rows], color=colours)
    floors = [(i, r["floor_ms"]) for i, r in enumerate(rows) if r["floor_ms"]]
    if floors:
        ax.scatter([f for _, f in floors], [i for i, _ in floors], marker="|", s=260, color="black", zorder=3,
                   label="physical floor (bytes / ceiling measured on this machine in this sweep)")
        ax.legend(loc="upper right", fontsize=8)  # the shortest bars are at the top
    for i, r in enumerate(rows):
        ax.text(r["median_ms"], i, f" {r['median_ms']:.3f} ms", va="center", fontsize=7)
    ax.set_xscale("log")
    ax.set_yticks(list(y), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"median ms for one learner batch to reach the GPU (green: {LABELS[GPU_SAMPLE]}, "
                  f"red: {LABELS[END_TO_END]})", fontsize=8)
    ax.grid(axis="x", alpha=0.3, which="both")
    bx.barh(y, [r["batch_bytes"] / MIB for r in rows], color="#4C78A8")
    for i, r in enumerate(rows):
        bx.text(r["batch_bytes"] / MIB, i, f" {r['batch_bytes'] / MIB:.1f}", va="center", fontsize=7)
    bx.set_xlabel("MiB per learner iteration (batch payload)", fontsize=8)
    bx.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{doc['args']['task']}/{doc['args']['sim']}: one learner batch to the GPU, per placement, "
                 f"{capacity_rows:,} rows\n{doc.get('device_info', '')}", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path, dpi=DPI, bbox_inches="tight")


__all__ = ["batch_to_gpu_rows", "placement_chart"]
