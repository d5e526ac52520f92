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


def timing_entry(samples: list[float], metric: str, moved: float, *, warmup: int, repeat: int,
                 ceilings: dict, clock: str) -> dict:
    """Summary, bytes, effective rate and distance from the measured ceiling of one metric's samples."""
    stats = summarize(samples)
    entry = {"samples_ms": samples, **stats, "warmup": warmup, "repeat": repeat, "clock": clock,
             "bytes_moved": moved, "effective_Bps": moved / (stats["median_ms"] / 1e3)}
    ceiling = ceilings.get(CEILING_OF[metric])
    if ceiling:
        entry["floor_ms"] = moved / ceiling * 1e3
        entry["x_floor"] = stats["median_ms"] / entry["floor_ms"]
    return entry


__all__ = ["CEILING_OF", "CaseOutcome", "bytes_moved", "skip_record", "timing_entry"]
