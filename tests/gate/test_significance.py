"""asv's significance rule, computed with scipy, pinned to the p-values asv's own code gives.

EXPECTED_P was recorded on 2026-12-03 from asv._stats.mann_whitney_u (asv 0.6.6) on the
sample pairs of CASES, before rlperf.gate.significance stopped importing asv's private module: the scipy
version must keep giving asv's numbers (and so asv's decisions), whatever asv later does to _stats.
"""

from __future__ import annotations

import pytest

from rlperf.gate.significance import EXACT_MAX_N, ci99_disjoint, conservative_u, mann_whitney_p, smallest_p
from rlperf.gate.verdict import assess


def wobble(n, center, step, mod, mult=7, digits=6):
    """Deterministic spread without randomness: center + step * ((mult*i) % mod)."""
    return [round(center + step * ((mult * i) % mod), digits) for i in range(n)]


CASES = {
    "separated 6+6": ([1.00, 1.01, 1.02, 1.03, 1.04, 1.05], [2.00, 2.01, 2.02, 2.03, 2.04, 2.05]),
    "interleaved 6+6": ([1.0, 1.2, 1.4, 1.6, 1.8, 2.0], [1.1, 1.3, 1.5, 1.7, 1.9, 2.1]),
    "one overlap 6+6": ([1.0, 1.1, 1.2, 1.3, 1.4, 2.5], [2.0, 2.1, 2.2, 2.3, 2.4, 2.6]),
    "small 3+4": ([1.0, 2.0, 3.0], [2.5, 3.5, 4.5, 5.5]),
    "unequal 7+12": (wobble(7, 1.0, 0.01, 5), wobble(12, 1.03, 0.01, 7)),
    "ties 10+10": (wobble(10, 1.0, 0.01, 4), wobble(10, 1.02, 0.01, 4)),
    "ties straddling half 8+8": ([1, 1, 2, 2, 3, 3, 4, 4], [2, 2, 2, 3, 3, 3, 3, 5]),
    "ties one-sided 9+9": ([1, 1, 1, 2, 2, 2, 3, 3, 3], [3, 3, 3, 4, 4, 4, 5, 5, 5]),
    "identical 8+8": (wobble(8, 1.0, 0.01, 8, mult=1), wobble(8, 1.0, 0.01, 8, mult=1)),
    "constant 6+6": ([1.5] * 6, [1.5] * 6),
    "exact at 20+20": (wobble(20, 1.0, 0.001, 11), wobble(20, 1.004, 0.001, 13)),
    "normal at 21+15": (wobble(21, 1.0, 0.001, 11), wobble(15, 1.004, 0.001, 13)),
    "large 25+30": (wobble(25, 1.0, 0.001, 17), wobble(30, 1.002, 0.001, 19)),
    "large ties 30+30": (wobble(30, 1.0, 0.01, 5), wobble(30, 1.01, 0.01, 5)),
    "large separated 40+40": (wobble(40, 1.0, 0.001, 37), wobble(40, 2.0, 0.001, 37)),
    "large identical 30+30": (wobble(30, 1.0, 0.01, 30, mult=1), wobble(30, 1.0, 0.01, 30, mult=1)),
}

# Recorded from asv._stats.mann_whitney_u(x, y)[1] (see module docstring); not computed by rlperf.
EXPECTED_P = {
    "separated 6+6": 0.002164502164501989,
    "interleaved 6+6": 0.699134199134199,
    "one overlap 6+6": 0.04112554112554101,
    "small 3+4": 0.11428571428571419,
    "unequal 7+12": 0.14221640073033237,
    "ties 10+10": 0.02880555976531208,
    "ties straddling half 8+8": 1.0,
    "ties one-sided 9+9": 0.003990127519539408,
    "identical 8+8": 1.0,
    "constant 6+6": 1.0,
    "exact at 20+20": 0.0021655491404492695,
    "normal at 21+15": 0.004081127603175844,
    "large 25+30": 0.08168046464601092,
    "large ties 30+30": 0.18332122622250843,
    "large separated 40+40": 1.3820849047603772e-14,
    "large identical 30+30": 1.0,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_p_values_match_asv(case):
    x, y = CASES[case]
    # asv sums the exact pmf term by term, scipy does not: they agree to float rounding, not bit for bit
    assert mann_whitney_p(x, y) == pytest.approx(EXPECTED_P[case], rel=1e-12, abs=0)
    assert mann_whitney_p(y, x) == pytest.approx(EXPECTED_P[case], rel=1e-12, abs=0)  # two-sided


def test_cases_cover_both_distributions_and_ties():
    sizes = [max(len(x), len(y)) for x, y in CASES.values()]
    assert min(sizes) <= EXACT_MAX_N < max(sizes)
    assert EXACT_MAX_N + 1 in sizes and EXACT_MAX_N in sizes
    assert sum(any(a == b for a in x for b in y) for x, y in CASES.values()) >= 6


def test_ties_break_towards_the_least_significant_u():
    # no x above a y, 9 tied pairs: U may be 0..9; 9 is farthest from the tail (mid-ranks would say 4.5)
    assert conservative_u(*CASES["ties one-sided 9+9"]) == 9
    # wins + ties straddle m*n/2: the middle itself
    x, y = CASES["ties straddling half 8+8"]
    assert conservative_u(x, y) == len(x) * len(y) // 2
    assert conservative_u([1.0, 2.0], [3.0, 4.0]) == 0  # no ties: plain U


def test_mann_whitney_runs_only_where_p_can_reach_the_threshold():
    assert smallest_p(6, 6) == 1 / 924 and smallest_p(5, 5) == 1 / 252
    assert assess(*CASES["separated 6+6"], None, None).method == "mann-whitney"
    assert assess([1.0, 1.1, 1.2, 1.3, 1.4], [2.0, 2.1, 2.2, 2.3, 2.4], None, None).method == "factor-only"


@pytest.mark.parametrize("case", sorted(CASES))
def test_decisions_follow_the_pinned_p(case):
    x, y = CASES[case]
    for threshold in (0.002, 0.005, 0.05):
        if smallest_p(len(x), len(y)) < threshold:
            assert assess(x, y, None, None, threshold).significant == (EXPECTED_P[case] < threshold)


def test_ci_fallback_is_asvs_overlap_rule():
    ci = lambda a, b: {"ci_99_a": a, "ci_99_b": b}  # noqa: E731
    assert ci99_disjoint(ci(1.0, 1.1), ci(1.2, 1.3)) and ci99_disjoint(ci(1.2, 1.3), ci(1.0, 1.1))
    assert not ci99_disjoint(ci(1.0, 1.2), ci(1.2, 1.3))  # touching counts as overlap
    assert not ci99_disjoint(ci(1.0, 2.0), ci(1.2, 1.3))
    s = assess(None, None, ci(1.0, 1.1), ci(1.0, 1.05))
    assert (s.method, s.significant) == ("ci99", False)
    assert assess([1.0], [2.0], ci(1.0, float("inf")), ci(2.0, 2.1)).method == "factor-only"
