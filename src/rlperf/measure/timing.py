"""Timers that are honest about asynchronous devices.

Host work: a wall clock read only after every device in use is synchronised.
Device work: CUDA events on the stream that runs it, read after the end event completes.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence


def synchronize(devices: Sequence) -> None:
    """Wait for all work queued on `devices` (torch.device list; empty means nothing to wait for)."""
    if not devices:
        return
    import torch

    for dev in devices:
        torch.cuda.synchronize(dev)


def time_wall(fn: Callable[[], object], *, warmup: int, repeat: int, devices: Sequence = ()) -> list[float]:
    """Synchronised wall-clock samples in ms: sync, read clock, call, sync, read clock."""
    samples = []
    for i in range(warmup + repeat):
        synchronize(devices)
        t0 = time.perf_counter_ns()
        fn()
        synchronize(devices)
        dt = (time.perf_counter_ns() - t0) / 1e6
        if i >= warmup:
            samples.append(dt)
    return samples


HOLD_CYCLES_START = 2_000_000  # ~1 ms at the H200's 1.98 GHz: the first hold of a run-ahead timing
HOLD_CYCLES_MAX = 200_000_000  # ~0.1 s: a `fn` that synchronises inside can never run ahead; stop growing


def next_hold(cycles: int, caught_up: bool) -> int:
    """The GPU hold for the next sample: doubled (up to HOLD_CYCLES_MAX) when the last one ran out
    before the host had queued its window, else unchanged."""
    return min(2 * cycles, HOLD_CYCLES_MAX) if caught_up else cycles


def time_cuda(fn: Callable[[], object], *, warmup: int, repeat: int, stream=None, inner: int = 1,
              run_ahead: bool = False) -> list[float]:
    """CUDA-event samples in ms of the device work `fn` queues on `stream` (the current one if None).

    With `inner` > 1 each sample spans that many back-to-back calls and reports their mean. With
    `run_ahead` the stream is first held by a GPU-side spin while the host queues the whole window,
    so the window holds device work only, as in a training loop whose launches run ahead of the GPU.
    Without it, a call whose host cost (Python, launch) exceeds its device time is timed at the host's
    pace, and the sample follows the host's speed, not the kernel's (docs/replay-bimodality.md).
    The hold doubles whenever the host had not finished queueing when it ran out.
    """
    import torch

    stream = stream or torch.cuda.current_stream()
    samples = []
    hold = HOLD_CYCLES_START
    with torch.cuda.stream(stream):
        for i in range(warmup + repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            if run_ahead:
                torch.cuda._sleep(hold)
            start.record(stream)
            for _ in range(inner):
                fn()
            end.record(stream)
            if run_ahead:
                hold = next_hold(hold, caught_up=start.query())
            end.synchronize()
            if i >= warmup:
                samples.append(start.elapsed_time(end) / inner)
    return samples
