"""The statistics of asv's significance rule (asv/_stats.py), computed with scipy instead of asv's private module.

The rule itself (which test applies, and what it decides) is gate.verdict.assess: a Mann–Whitney U
test on the stored samples (p < 0.002) when both sides have enough samples for such a p to be possible
at all (≥ 6 + 6, smallest_p), otherwise non-overlap of the stored 99% confidence intervals
(ci99_disjoint), otherwise the factor alone. This module only computes the numbers.

asv's Mann–Whitney test (reproduced here, see mann_whitney_p) breaks ties the conservative way: of all
the ways to order tied base/head pairs it takes the least significant one; it uses U's exact
distribution while both sides have ≤ 20 samples and the normal approximation (no continuity or tie
correction) above. tests/gate/test_significance.py pins the p-values to those asv._stats gives.
"""

from __future__ import annotations

import math
EXACT_MAX_N = 20  # asv: exact distribution while max(m, n) <= 20, normal approximation above


def conservative_u(x, y) -> int:
    """U = #(x_i > y_j) under the tie break that lies closest to m·n/2 (asv's least significant one).

    Each tied pair may count for x or for y, so U can be anything in [wins, wins + ties]; asv keeps the
    end of that range (or the middle, m·n//2, when the range straddles it) farthest from the tails."""
    m, n = len(x), len(y)
    wins = sum(1 for a in x for b in y if a > b)
    ties = sum(1 for a in x for b in y if a == b)
    half = m * n // 2
    if wins <= half <= wins + ties:
        return half
    low_end, high_end = wins, wins + ties
    return low_end if min(low_end, m * n - low_end) >= min(high_end, m * n - high_end) else high_end


def _untied_samples(m: int, n: int, u: int) -> tuple[list[float], list[float]]:
    """Samples of sizes m and n without any tie (within or across them) whose U (pairs x > y) is `u`.

    scipy's test takes samples, not U, and treats ties with mid-ranks (U ± ½ per tie) and a tie
    correction of the variance; handing it the conservatively tie-broken ordering, tie-free, gives
    asv's p-value from scipy's distribution of U."""
    y = [float(j) for j in range(n)]
    x, left = [], u
    for i in range(m):
        below = min(n, left)  # this x lies above `below` of the y values, strictly between y's
        x.append(below - 1 + (i + 1) / (m + 1))
        left -= below
    return x, y


def mann_whitney_p(x, y) -> float:
    """Two-sided Mann–Whitney p of x vs y, as asv._stats.mann_whitney_u computes it (module docstring)."""
    m, n = len(x), len(y)
    u = conservative_u(x, y)
    method = "exact" if max(m, n) <= EXACT_MAX_N else "asymptotic"
    ux, uy = _untied_samples(m, n, u)
    from scipy.stats import mannwhitneyu  # here: importing scipy.stats costs seconds, most verdicts never need it

    return float(mannwhitneyu(ux, uy, alternative="two-sided", method=method, use_continuity=False).pvalue)


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p an (m, n) Mann–Whitney test can give (asv: 1 / C(m+n, min(m, n)))."""
    return 1 / math.comb(m + n, min(m, n))  # exact integer, as asv's binom


def ci99_disjoint(base_stats: dict, head_stats: dict) -> bool:
    """asv's fallback: significant only when the stored 99% confidence intervals do not overlap."""
    return not (base_stats["ci_99_b"] >= head_stats["ci_99_a"] and base_stats["ci_99_a"] <= head_stats["ci_99_b"])


__all__ = ["EXACT_MAX_N", "ci99_disjoint", "conservative_u", "mann_whitney_p", "smallest_p"]
