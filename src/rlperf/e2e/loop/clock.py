"""Spans on the learner's clock: CUDA events on its stream when it is a GPU, a wall clock otherwise.

Events are read only after the loop has synchronised the device at the end of an iteration, so
reading them never adds a sync of its own.
"""

from __future__ import annotations

import time


class Span:
    """`start()` ... `stop()`; `ms()` after the device is synchronised."""

    def __init__(self, device):
        self.cuda = device is not None and getattr(device, "type", str(device)) == "cuda"
        self._t0 = self._t1 = 0.0
        if self.cuda:
            import torch

            self._e0 = torch.cuda.Event(enable_timing=True)
            self._e1 = torch.cuda.Event(enable_timing=True)

    def start(self) -> "Span":
        if self.cuda:
            self._e0.record()
        else:
            self._t0 = time.perf_counter()
        return self

    def stop(self) -> "Span":
        if self.cuda:
            self._e1.record()
        else:
            self._t1 = time.perf_counter()
        return self

    def ms(self) -> float:
        return self._e0.elapsed_time(self._e1) if self.cuda else (self._t1 - self._t0) * 1e3


def sync(device) -> None:
    """Wait for all queued work of the learner device (nothing to wait for on the CPU)."""
    if device is not None and getattr(device, "type", str(device)) == "cuda":
        import torch

        torch.cuda.synchronize(device)


def wall_ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def marked(name: str, device):
    """A profiler range (torch.profiler.record_function) and, on a GPU, an NVTX range of one phase."""
    import contextlib

    import torch

    stack = contextlib.ExitStack()
    stack.enter_context(torch.profiler.record_function(name))
    if device is not None and getattr(device, "type", str(device)) == "cuda":
        torch.cuda.nvtx.range_push(name)
        stack.callback(torch.cuda.nvtx.range_pop)
    return stack
