"""Is a difference real? asv's rule, reusing asv's own statistics (asv/_stats.py).

asv counts a change only when it is significant: a Mann–Whitney U test on the stored samples
(p < 0.002) when both sides have enough samples for such a p to be possible at all (≥ 6 + 6),
otherwise non-overlap of the stored 99% confidence intervals. Where neither is possible (one
sample, no `--record-samples`, infinite CI) the gate falls back to the factor alone and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from asv import _stats


@dataclass(frozen=True)
class Significance:
    significant: bool
    method: str  # "mann-whitney" | "ci99" | "factor-only"
    detail: str


def _clean(samples) -> list[float]:
    return [x for x in samples or [] if x is not None and not math.isnan(x)]


def _finite_ci(stats) -> bool:
    return bool(stats) and all(k in stats and math.isfinite(stats[k]) for k in ("ci_99_a", "ci_99_b"))


def assess(base_samples, head_samples, base_stats, head_stats, p_threshold: float = 0.002) -> Significance:
    """Significance of base vs head under asv's rule (see module docstring)."""
    a, b = _clean(base_samples), _clean(head_samples)
    if a and b:
        p_min = 1 / _stats.binom(len(a) + len(b), min(len(a), len(b)))
        if p_min < p_threshold:
            _, p = _stats.mann_whitney_u(a, b)
            return Significance(p < p_threshold, "mann-whitney", f"p={p:.2g} (n={len(a)}+{len(b)})")
    if _finite_ci(base_stats) and _finite_ci(head_stats):
        different = _stats.is_different(None, None, base_stats, head_stats)
        return Significance(different, "ci99", f"99% CIs {'disjoint' if different else 'overlap'}"
                                               f" (n={len(a)}+{len(b)} samples)")
    reason = f"only {len(a)}+{len(b)} samples" if (a or b) else "no samples stored"
    return Significance(True, "factor-only", f"{reason}: factor alone decides")


__all__ = ["Significance", "assess"]
