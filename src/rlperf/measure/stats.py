"""Summary statistics of raw samples (kept alongside, never instead of, the samples)."""

from __future__ import annotations

import statistics


def summarize(samples_ms: list[float]) -> dict:
    """mean, median, population stdev, min, max in ms, as the reference tools report them."""
    if not samples_ms:
        raise ValueError("no samples to summarize")
    return {
        "mean_ms": statistics.fmean(samples_ms),
        "median_ms": statistics.median(samples_ms),
        "std_ms": statistics.pstdev(samples_ms),
        "min_ms": min(samples_ms),
        "max_ms": max(samples_ms),
        "n": len(samples_ms),
    }
