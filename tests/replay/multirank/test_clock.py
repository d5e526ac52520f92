"""clock: per iteration, the slowest rank's time is the exposed time."""

from __future__ import annotations

from rlperf.replay.multirank.clock import exposed


def test_exposed_picks_the_slowest_rank_per_iteration():
    assert exposed([[1.0, 5.0, 2.0], [3.0, 1.0, 2.5]]) == ([3.0, 5.0, 2.5], [1, 0, 1])


def test_a_tie_goes_to_the_first_rank_and_no_iterations_give_nothing():
    assert exposed([[2.0, 1.0], [2.0, 4.0]]) == ([2.0, 4.0], [0, 1])
    assert exposed([[], []]) == ([], [])


def test_a_rank_times_only_the_repeats_and_records_its_barrier_wait(one_rank):
    from rlperf.replay.multirank.clock import time_ranks

    calls = []
    samples, waits = time_ranks(lambda: calls.append(1), one_rank, warmup=2, repeat=3)
    assert len(calls) == 5 and len(samples) == len(waits) == 3
    assert all(t >= 0 for t in samples + waits)


def test_one_ranks_failure_is_every_ranks_reason_and_reports_gather_in_rank_order(one_rank):
    from rlperf.replay.multirank.clock import agree, gather_to_root

    assert agree(one_rank, None) is None
    assert agree(one_rank, "device OOM") == "rank 0: device OOM"
    assert gather_to_root(one_rank, {"rank": 0}) == [{"rank": 0}]
