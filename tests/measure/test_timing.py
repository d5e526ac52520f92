"""The device timer: with `run_ahead` the host's cost per call stays out of CUDA-event samples."""

from __future__ import annotations

import statistics
import time

import pytest

from rlperf.measure.timing import HOLD_CYCLES_MAX, HOLD_CYCLES_START, next_hold, time_cuda


def test_the_hold_doubles_only_when_the_host_caught_up_and_stops_at_its_cap():
    assert next_hold(HOLD_CYCLES_START, caught_up=False) == HOLD_CYCLES_START
    assert next_hold(HOLD_CYCLES_START, caught_up=True) == 2 * HOLD_CYCLES_START
    assert next_hold(HOLD_CYCLES_MAX, caught_up=True) == HOLD_CYCLES_MAX


@pytest.mark.gpu
def test_run_ahead_times_the_device_work_not_a_slow_host():
    """A call that spends 2 ms on the host to queue a ~10 us kernel: only run-ahead reports the kernel."""
    import torch

    x = torch.ones(1 << 20, device="cuda")

    def slow_host_call():
        time.sleep(0.002)
        x.mul_(1.0)

    stream = torch.cuda.Stream()
    free = statistics.median(time_cuda(slow_host_call, warmup=2, repeat=5, stream=stream, inner=5))
    ahead = statistics.median(time_cuda(slow_host_call, warmup=2, repeat=5, stream=stream, inner=5, run_ahead=True))
    assert free > 1.5  # the host's pace
    assert ahead < 0.5  # the kernel's
