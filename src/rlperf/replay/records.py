"""Records every replay runner shares: a case's outcome, its skip entries and its timing entries.

Single-rank (`replay.run`) and multi-rank (`replay.multirank`) runners both build these, so they
live here, below both, and neither runner imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlperf.measure.stats import summarize
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D

# The ceiling each metric is bounded by (keys of measure.ceilings).
CEILING_OF = {CPU_SAMPLE: "host_copy_Bps", H2D: "h2d_pinned_Bps", END_TO_END: "h2d_pinned_Bps",
              GPU_SAMPLE: "d2d_Bps"}


@dataclass
class CaseOutcome:
    result: dict | None = None
    skipped: list[dict] = field(default_factory=list)


def skip_record(case, reason: str, metric: str | None = None) -> dict:
    """One entry of a result's `skipped` list: the point (and metric, if only that one) and why."""
    return {"placement": case.placement, "world_size": case.gpus, "capacity_rows": case.capacity_rows,
            "metric": metric, "reason": reason}


def bytes_moved(metric: str, per_sample: dict) -> int:
    """Bytes over the metric's critical resource, from a placement's bytes_per_sample(): a gather
    reads and writes the batch (host DRAM or HBM); H2D and end to end count what crosses PCIe, which
    for a cache is only its refresh block."""
    return {CPU_SAMPLE: 2 * per_sample["host_read"], H2D: per_sample["h2d"], END_TO_END: per_sample["h2d"],
            GPU_SAMPLE: 2 * per_sample["device_read"]}[metric]


def resource_bytes(metric: str, per_sample: dict) -> dict[str, int]:
    """Bytes the metric's work moves over each resource, keyed by the ceiling that bounds it. End to end
    counts what crosses PCIe and, for a GPU cache, its gather in HBM, which runs beside the refresh DMA."""
    return {CPU_SAMPLE: {"host_copy_Bps": 2 * per_sample["host_read"]},
            H2D: {"h2d_pinned_Bps": per_sample["h2d"]},
            END_TO_END: {"h2d_pinned_Bps": per_sample["h2d"], "d2d_Bps": 2 * per_sample["device_read"]},
            GPU_SAMPLE: {"d2d_Bps": 2 * per_sample["device_read"]}}[metric]


def floor_ms(resources: dict[str, int], ceilings: dict) -> float | None:
    """The least time the work can take: its resources run at most concurrently, so the slowest one at
    its measured ceiling bounds it (the max, never the sum). None when no ceiling applies."""
    times = [nbytes / ceilings[key] * 1e3 for key, nbytes in resources.items() if nbytes and ceilings.get(key)]
    return max(times) if times else None


def kernel_bytes(metric: str, per_sample: dict) -> int | None:
    """Bytes a fused kernel itself reads and writes per sample (`device_moved`, counted from its plan),
    where a placement reports them: set against `bytes_moved`, its payload read once and written once."""
    return per_sample.get("device_moved") if metric == GPU_SAMPLE else None


def timing_entry(samples: list[float], metric: str, moved: float, *, warmup: int, repeat: int,
                 ceilings: dict, clock: str, resources: dict[str, int] | None = None,
                 kernel: int | None = None) -> dict:
    """Summary, bytes, effective rate and distance from the measured floor of one metric's samples.

    `resources` (from resource_bytes) gives the floor every resource the work crosses; without it the
    floor counts `moved` over the metric's one ceiling. `kernel` (from kernel_bytes) adds what the
    kernel really moves and its ratio to `moved`."""
    stats = summarize(samples)
    entry = {"samples_ms": samples, **stats, "warmup": warmup, "repeat": repeat, "clock": clock,
             "bytes_moved": moved, "effective_Bps": moved / (stats["median_ms"] / 1e3)}
    if kernel:
        entry["kernel_bytes"] = kernel
        entry["kernel_x_payload"] = kernel / moved
    set_floor(entry, floor_ms(resources if resources is not None else {CEILING_OF[metric]: moved}, ceilings))
    return entry


def set_floor(entry: dict, floor: float | None) -> None:
    """Give a timing entry its floor and its median's distance from it, or none when no ceiling applies."""
    entry.pop("floor_ms", None)
    entry.pop("x_floor", None)
    if floor:
        entry["floor_ms"] = floor
        entry["x_floor"] = entry["median_ms"] / floor


__all__ = ["CEILING_OF", "CaseOutcome", "bytes_moved", "floor_ms", "kernel_bytes", "resource_bytes", "set_floor",
           "skip_record",
           "timing_entry"]
