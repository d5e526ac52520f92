"""The body of one rank process: join, set up, agree, verify, time every metric, report to rank 0.

Set-up failures that make a point infeasible (device OOM, a missing piece) are agreed on by all
ranks so they skip together instead of leaving peers blocked in a collective; a batch that fails
verification is a bug and raises, which makes spawn tear down every rank and re-raise in the parent.
"""

from __future__ import annotations

import json
import time

import torch
import torch.distributed as dist

from rlperf.replay.metrics import END_TO_END, H2D
from rlperf.replay.multirank.clock import agree, gather_to_root, time_ranks
from rlperf.replay.multirank.context import RANK_SEED_STRIDE, RankJob, init_rank
from rlperf.replay.multirank.specs import RANK_SPECS

NEEDS_DEVICE = (H2D, END_TO_END)  # a host -> device copy: nothing to time on CPU ranks


def main(rank: int, job: RankJob, shared_table=None) -> None:
    ctx = init_rank(rank, job)
    try:
        report = _run(ctx, job, shared_table)
        if rank == 0:
            with open(job.result_path, "w") as fh:
                json.dump(report, fh)
    finally:
        dist.destroy_process_group()


def _run(ctx, job: RankJob, shared_table) -> dict | None:
    spec = RANK_SPECS[job.placement]
    placement = spec.load()(ctx=ctx, shared_table=shared_table, spec=spec, layout=job.layout,
                            capacity_rows=job.capacity_rows, sample_rows=job.sample_rows, device=ctx.device,
                            threads=ctx.threads, seed=job.seed + ctx.rank * RANK_SEED_STRIDE)
    t0 = time.perf_counter()
    reason = None
    try:
        placement.setup()
    except torch.cuda.OutOfMemoryError as exc:
        reason = f"device OOM during benchmark allocation/run: {exc}"
    except NotImplementedError as exc:
        reason = str(exc)
    setup_s = time.perf_counter() - t0
    reason = agree(ctx, reason)
    if reason:
        return {"skip": reason}
    placement.verify()  # every rank checks its own batch; sharded-global exercises the all-to-all here
    timings, skipped = {}, []
    for metric in spec.metrics:
        if metric in NEEDS_DEVICE and ctx.device is None:
            skipped.append({"metric": metric, "reason": "CPU ranks: no device to copy to, not measured"})
            continue
        samples, waits = time_ranks(placement.step(metric), ctx, warmup=job.warmup, repeat=job.repeat)
        timings[metric] = {"samples_ms": samples, "barrier_ms": waits}
    payload = {"rank": ctx.rank, "device": str(ctx.device or "cpu"), "backend": ctx.backend,
               "threads": ctx.threads, "numa_node": ctx.numa_node, "cores": ctx.cores, "setup_s": setup_s,
               "verified": True, "traffic": placement.traffic(), "timings": timings}
    ranks = gather_to_root(ctx, payload)
    return {"ranks": ranks, "skipped": skipped} if ctx.rank == 0 else None
