"""Per-rank timing after a barrier; the slowest rank decides the exposed time.

Each iteration: synchronise this rank's device, wait on the control barrier (time spent there is
recorded: it is the skew between ranks), then time this rank's own sample up to the point its device
has finished. Per-rank samples are gathered to rank 0 once, after the timed loop, so the gather
never sits between two timed iterations' barriers.
"""

from __future__ import annotations

import time
from typing import Callable

import torch.distributed as dist

from rlperf.measure.timing import synchronize


def time_ranks(fn: Callable[[], object], ctx, *, warmup: int, repeat: int) -> tuple[list[float], list[float]]:
    """(sample ms, barrier wait ms) of this rank for `repeat` iterations after `warmup`."""
    samples, waits = [], []
    for i in range(warmup + repeat):
        synchronize(ctx.sync_devices)
        t0 = time.perf_counter_ns()
        dist.barrier(group=ctx.ctrl_group)
        t1 = time.perf_counter_ns()
        fn()
        synchronize(ctx.sync_devices)
        t2 = time.perf_counter_ns()
        if i >= warmup:
            samples.append((t2 - t1) / 1e6)
            waits.append((t1 - t0) / 1e6)
    return samples, waits


def gather_to_root(ctx, obj) -> list | None:
    """Every rank's `obj` on rank 0 (in rank order), None elsewhere; over the gloo control group."""
    out = [None] * ctx.world if ctx.rank == 0 else None
    dist.gather_object(obj, out, dst=0, group=ctx.ctrl_group)
    return out


def agree(ctx, reason: str | None) -> str | None:
    """The first rank's failure reason on every rank (None when all succeeded): all skip together."""
    reasons = [None] * ctx.world
    dist.all_gather_object(reasons, reason, group=ctx.ctrl_group)
    return next((f"rank {r}: {text}" for r, text in enumerate(reasons) if text), None)


def exposed(per_rank: list[list[float]]) -> tuple[list[float], list[int]]:
    """Per iteration, the slowest rank's time and which rank it was."""
    times, who = [], []
    for column in zip(*per_rank):
        slowest = max(range(len(column)), key=column.__getitem__)
        times.append(column[slowest])
        who.append(slowest)
    return times, who
