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


def time_cuda(fn: Callable[[], object], *, warmup: int, repeat: int, stream=None, inner: int = 1) -> list[float]:
    """CUDA-event samples in ms of the device work `fn` queues on `stream` (the current one if None).

    With `inner` > 1 each sample spans that many back-to-back calls and reports their mean: for
    kernels of ~0.1 ms this keeps the host launch gap (5-20 us) out of the window, as in a training
    loop where launches run ahead of the GPU.
    """
    import torch

    stream = stream or torch.cuda.current_stream()
    samples = []
    with torch.cuda.stream(stream):
        for i in range(warmup + repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(inner):
                fn()
            end.record(stream)
            end.synchronize()
            if i >= warmup:
                samples.append(start.elapsed_time(end) / inner)
    return samples
