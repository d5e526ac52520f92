"""E-divisive means change points (Matteson & James 2014) with the t-test of Hunter/Otava (Fleming et al. 2023).

Written here from the published algorithm, not from Otava's code: apache-otava 0.8.0 pins numpy 2.2 and
scipy < 1.17 (the suite pins numpy 2.4.6 and scipy 1.17.1) and pulls BigQuery, Postgres and Slack clients.

The method, in short:
* Divergence of a split. For a segment z and a split point t (left X = z[:t], right Y = z[t:]), the
  energy divergence with exponent 1 is 2 E|X - Y| - E|X - X'| - E|Y - Y'| (means over distinct pairs);
  scaled by t (n - t) / n it becomes the statistic Q(t). Q is large where the two sides differ in
  distribution, not only in mean, and it uses no parametric model of the noise.
* Hierarchical splitting. The best split of every current segment is a candidate; the candidate with the
  largest Q is tested, and if significant it splits its segment and the search goes on in both halves.
* Significance (Hunter's change to Matteson & James's permutation test, so results are deterministic):
  Welch's t-test between the values on each side of a change point, up to its neighbouring change points;
  a point is kept when p < max_pvalue. A segment whose best split fails stays whole. After the search every kept point is re-tested against its final
  neighbours and the weakest insignificant one is dropped, until all pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Split:
    index: int  # first index of the new level
    pvalue: float


def divergence(z: np.ndarray, min_size: int) -> tuple[int, float]:
    """(best split index, its Q) of one segment; (-1, 0) when no split leaves min_size on each side."""
    n = len(z)
    if n < 2 * min_size:
        return -1, 0.0
    d = np.abs(z[:, None] - z[None, :])
    best_t, best_q = -1, -np.inf
    for t in range(min_size, n - min_size + 1):
        m, k = t, n - t
        between = d[:t, t:].mean()
        within_x = d[:t, :t].sum() / (m * (m - 1)) if m > 1 else 0.0
        within_y = d[t:, t:].sum() / (k * (k - 1)) if k > 1 else 0.0
        q = (m * k / n) * (2.0 * between - within_x - within_y)
        if q > best_q:
            best_t, best_q = t, q
    return best_t, float(best_q)


def _pvalue(left: np.ndarray, right: np.ndarray) -> float:
    """Welch's t-test p-value; 1 when a side is too short or both sides are constant and equal."""
    if len(left) < 2 or len(right) < 2:
        return 1.0
    if np.ptp(left) == 0 and np.ptp(right) == 0:
        return 0.0 if left[0] != right[0] else 1.0
    p = stats.ttest_ind(left, right, equal_var=False).pvalue
    return 1.0 if not np.isfinite(p) else float(p)


def _pvalues(z: np.ndarray, cuts: list[int]) -> list[float]:
    bounds = [0, *cuts, len(z)]
    return [_pvalue(z[bounds[i]:bounds[i + 1]], z[bounds[i + 1]:bounds[i + 2]]) for i in range(len(cuts))]


def change_points(values, max_pvalue: float = 0.001, min_size: int = 3) -> list[Split]:
    """Significant change points of `values` (indices of the first value of each new level), in order."""
    z = np.asarray(values, dtype=float)
    cuts: list[int] = []
    final: set[tuple[int, int]] = set()  # segments whose best split was not significant
    while True:
        bounds = [0, *cuts, len(z)]
        candidates = []
        for lo, hi in zip(bounds, bounds[1:]):
            t, q = divergence(z[lo:hi], min_size) if (lo, hi) not in final else (-1, 0.0)
            if t > 0:
                candidates.append((q, lo + t, (lo, hi)))
        if not candidates:
            break
        _, cut, segment = max(candidates)
        trial = sorted([*cuts, cut])
        if _pvalues(z, trial)[trial.index(cut)] < max_pvalue:
            cuts = trial
        else:
            final.add(segment)
    while cuts:
        ps = _pvalues(z, cuts)
        worst = int(np.argmax(ps))
        if ps[worst] < max_pvalue:
            break
        cuts.pop(worst)
    return [Split(c, p) for c, p in zip(cuts, _pvalues(z, cuts))]


__all__ = ["Split", "change_points", "divergence"]
