"""Reshape a replay result document into rows the charts and the analysis share."""

from __future__ import annotations

from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D, LABELS

# The reference's four bars come from the baseline placements; the others add one bar each.
REFERENCE_SERIES = (("host", CPU_SAMPLE), ("host", H2D), ("host", END_TO_END), ("gpu", GPU_SAMPLE))


def median_ms(doc: dict, placement: str, metric: str, gpus: int, capacity_rows: int) -> float | None:
    """The point's median: what the charts and the analysis show (a mean follows a few slow samples)."""
    for res in doc["results"]:
        if (res["placement"], res["world_size"], res["capacity_rows"]) == (placement, gpus, capacity_rows):
            timing = res["timings"].get(metric)
            return timing["median_ms"] if timing else None
    return None


# With several GPUs the reference's host / GPU columns are measured by their process-per-rank forms.
MULTI_GPU_FORM = {"host": "shared-host", "gpu": "gpu-replica"}


def reference_ms(doc: dict, placement: str, metric: str, gpus: int, capacity_rows: int) -> float | None:
    """median_ms of the reference's column: at N > 1 GPUs, `host` and `gpu` read their per-rank forms."""
    if gpus > 1:
        placement = MULTI_GPU_FORM.get(placement, placement)
    return median_ms(doc, placement, metric, gpus, capacity_rows)


def series(doc: dict) -> list[tuple[str, str]]:
    """(placement, metric) pairs present in the results: the reference four first, then the rest."""
    present = {(r["placement"], m) for r in doc["results"] for m in r["timings"]}
    extra = sorted(present - set(REFERENCE_SERIES))
    return [s for s in REFERENCE_SERIES if s in present] + extra


def series_label(placement: str, metric: str) -> str:
    if (placement, metric) in REFERENCE_SERIES:
        return LABELS[metric]
    return f"{LABELS[metric]} [{placement}]"


def gpu_counts(doc: dict) -> list[int]:
    return sorted({r["world_size"] for r in doc["results"]})


def capacity_rows_at(doc: dict, gpus: int) -> list[int]:
    return sorted({r["capacity_rows"] for r in doc["results"] if r["world_size"] == gpus})


def speedup(doc: dict, gpus: int, capacity_rows: int) -> float | None:
    """The reference's speedup: host CPU sample+H2D divided by GPU-resident sample."""
    host = reference_ms(doc, "host", END_TO_END, gpus, capacity_rows)
    gpu = reference_ms(doc, "gpu", GPU_SAMPLE, gpus, capacity_rows)
    return host / gpu if host and gpu else None


def capacity_label(capacity_rows: int, config_capacity_rows: int) -> str:
    """Rows, exactly (1,048,576 rows, not "1M"), then the power of two and the multiple of the configured
    capacity."""
    power = f"2^{capacity_rows.bit_length() - 1}, " if capacity_rows & (capacity_rows - 1) == 0 else ""
    return f"{capacity_rows:,} rows\n({power}{capacity_rows / config_capacity_rows:g}x config)"
