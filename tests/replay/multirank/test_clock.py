"""clock: per iteration, the slowest rank's time is the exposed time."""

from __future__ import annotations

from rlperf.replay.multirank.clock import exposed


def test_exposed_picks_the_slowest_rank_per_iteration():
    assert exposed([[1.0, 5.0, 2.0], [3.0, 1.0, 2.5]]) == ([3.0, 5.0, 2.5], [1, 0, 1])
