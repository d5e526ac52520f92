"""Measure one replay case: guard, set up once, verify a real batch, then time each metric."""

from __future__ import annotations

import time

import torch

from rlperf.replay.build import build_placement
from rlperf.replay.cases import ReplayCase, Resources, feasibility
from rlperf.replay.huge_pages import host_table_backing
from rlperf.replay.metrics import CLOCKS, CPU_SAMPLE
from rlperf.replay.peak_memory import PeakMemory
from rlperf.replay.records import (CEILING_OF, CaseOutcome, bytes_moved, kernel_bytes, resource_bytes, skip_record,
                                  timing_entry)
from rlperf.replay.tables import release_tables

__all__ = ["CEILING_OF", "CaseOutcome", "build_placement", "bytes_moved", "learner_device", "run_case",
           "skip_record", "timing_entry"]


def learner_device() -> torch.device | None:
    return torch.device("cuda", 0) if torch.cuda.is_available() else None


def run_case(case: ReplayCase, res: Resources, *, warmup: int, repeat: int, threads: int, seed: int,
             ceilings: dict | None = None) -> CaseOutcome:
    from rlperf.replay.multirank import run_multirank_case

    verdict = feasibility(case, res)
    if not verdict.ok:
        return CaseOutcome(skipped=[skip_record(case, verdict.reason)])
    if case.spec.multi_rank:
        return run_multirank_case(case, res, warmup=warmup, repeat=repeat, seed=seed, ceilings=ceilings,
                                  threads=threads)
    outcome = CaseOutcome()
    placement = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(),
                                threads=threads, seed=seed)
    peak = PeakMemory(learner_device())
    try:
        t0 = time.perf_counter()
        placement.setup()
        setup_s = time.perf_counter() - t0
        placement.verify()
        timings = {}
        for metric in placement.metrics:
            if metric != CPU_SAMPLE and placement.device is None:
                outcome.skipped.append(skip_record(case, "no CUDA device: device timing not measured", metric))
                continue
            samples = placement.measure(metric, warmup=warmup, repeat=repeat)
            per_sample = placement.bytes_per_sample()
            timings[metric] = timing_entry(samples, metric, bytes_moved(metric, per_sample),
                                           warmup=warmup, repeat=repeat, ceilings=ceilings or {},
                                           clock=CLOCKS[metric], resources=resource_bytes(metric, per_sample),
                                           kernel=kernel_bytes(metric, per_sample))
        memory = peak.read()
        storage_bytes = placement.storage_bytes
        host_table = host_table_backing(placement)
    except torch.cuda.OutOfMemoryError as exc:
        return CaseOutcome(skipped=[skip_record(case, f"device OOM during benchmark allocation/run: {exc}")])
    except NotImplementedError as exc:
        return CaseOutcome(skipped=[skip_record(case, str(exc))])
    finally:
        del placement
        release_tables()
    if not timings:
        return outcome
    wl = case.workload
    spec = case.spec
    layout = spec.stored_layout(wl.layout)
    outcome.result = {
        "placement": case.placement, "world_size": case.gpus, "capacity_rows": case.capacity_rows,
        "storage": spec.storage, "sampler": spec.sampler, "transfer": spec.transfer,
        "torch_threads": threads, "row_bytes": wl.row_bytes, **layout.summary(wl.sample_rows_per_rank),
        "replay_bytes_per_rank": case.capacity_rows * wl.row_bytes,
        "storage_bytes": storage_bytes, "sample_bytes_per_rank": wl.sample_bytes_per_rank,
        "global_sample_bytes": wl.global_sample_bytes, **memory,
        "setup_s": setup_s, "verified": True, "host_table": host_table, "timings": timings,
    }
    return outcome
