"""Measure one replay case: guard, set up once, verify a real batch, then time each metric."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from rlperf.measure.stats import summarize
from rlperf.replay.cases import ReplayCase, Resources, feasibility
from rlperf.replay.metrics import CLOCKS, CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.replay.tables import release_tables

# The ceiling each metric is bounded by (keys of measure.ceilings), for its effective-rate bytes.
CEILING_OF = {CPU_SAMPLE: "host_copy_Bps", H2D: "h2d_pinned_Bps", END_TO_END: "h2d_pinned_Bps",
              GPU_SAMPLE: "d2d_Bps"}


@dataclass
class CaseOutcome:
    result: dict | None = None
    skipped: list[dict] = field(default_factory=list)


def learner_device() -> torch.device | None:
    return torch.device("cuda", 0) if torch.cuda.is_available() else None


def skip_record(case: ReplayCase, reason: str, metric: str | None = None) -> dict:
    """One entry of a result's `skipped` list: the point (and metric, if only that one) and why."""
    return {"placement": case.placement, "world_size": case.gpus, "capacity_rows": case.capacity_rows,
            "metric": metric, "reason": reason}


def build_placement(case: ReplayCase, *, threads: int, seed: int):
    wl = case.workload
    return case.spec.load()(spec=case.spec, layout=wl.layout, capacity=case.capacity_rows,
                              sample_rows=wl.sample_rows_per_rank, device=learner_device(),
                              threads=threads, seed=seed)


def run_case(case: ReplayCase, res: Resources, *, warmup: int, repeat: int, threads: int, seed: int,
             ceilings: dict | None = None) -> CaseOutcome:
    from rlperf.replay.multirank import RANK_SPECS, run_multirank_case  # lazy: multirank imports this module

    verdict = feasibility(case, res)
    if not verdict.ok:
        return CaseOutcome(skipped=[skip_record(case, verdict.reason)])
    if case.placement in RANK_SPECS:
        return run_multirank_case(case, res, warmup=warmup, repeat=repeat, seed=seed, ceilings=ceilings,
                                  threads=threads)
    outcome = CaseOutcome()
    placement = build_placement(case, threads=threads, seed=seed)
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
                                           clock=CLOCKS[metric], resources=resource_bytes(metric, per_sample))
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
    outcome.result = {
        "placement": case.placement, "world_size": case.gpus, "capacity_rows": case.capacity_rows,
        "torch_threads": threads, "row_bytes": wl.row_bytes,
        "stored_row_bytes": case.spec.stored_layout(wl.layout).stored_row_bytes,
        "replay_bytes_per_rank": case.capacity_rows * wl.row_bytes,
        "sample_bytes_per_rank": wl.sample_bytes_per_rank, "global_sample_bytes": wl.global_sample_bytes,
        "setup_s": setup_s, "verified": True, "timings": timings,
    }
    return outcome


def bytes_moved(metric: str, per_sample: dict) -> int:
    """Bytes over the metric's critical resource, from a placement's bytes_per_sample(): a gather
    reads and writes the batch (host DRAM or HBM); H2D and end to end count what crosses PCIe, which
    for a cache is only its refresh block."""
    return {CPU_SAMPLE: 2 * per_sample["host_read"], H2D: per_sample["h2d"], END_TO_END: per_sample["h2d"],
            GPU_SAMPLE: 2 * per_sample["device_read"]}[metric]


def resource_bytes(metric: str, per_sample: dict) -> dict[str, int]:
    """Bytes the metric's work moves over each resource, keyed by the ceiling that bounds it. End to end
    counts what crosses PCIe and, for a GPU cache, its gather in HBM, which runs beside the refresh DMA."""
    return {CPU_SAMPLE: {"host_copy_Bps": 2 * per_sample["host_read"]},
            H2D: {"h2d_pinned_Bps": per_sample["h2d"]},
            END_TO_END: {"h2d_pinned_Bps": per_sample["h2d"], "d2d_Bps": 2 * per_sample["device_read"]},
            GPU_SAMPLE: {"d2d_Bps": 2 * per_sample["device_read"]}}[metric]


def floor_ms(resources: dict[str, int], ceilings: dict) -> float | None:
    """The least time the work can take: its resources run at most concurrently, so the slowest one at
    its measured ceiling bounds it (the max, never the sum). None when no ceiling applies."""
    times = [nbytes / ceilings[key] * 1e3 for key, nbytes in resources.items() if nbytes and ceilings.get(key)]
    return max(times) if times else None


def timing_entry(samples: list[float], metric: str, moved: float, *, warmup: int, repeat: int,
                 ceilings: dict, clock: str, resources: dict[str, int] | None = None) -> dict:
    """Summary, bytes, effective rate and distance from the measured floor of one metric's samples.

    `resources` (from resource_bytes) gives the floor every resource the work crosses; without it the
    floor counts `moved` over the metric's one ceiling."""
    stats = summarize(samples)
    entry = {"samples_ms": samples, **stats, "warmup": warmup, "repeat": repeat, "clock": clock,
             "bytes_moved": moved, "effective_Bps": moved / (stats["median_ms"] / 1e3)}
    floor = floor_ms(resources if resources is not None else {CEILING_OF[metric]: moved}, ceilings)
    if floor:
        entry["floor_ms"] = floor
        entry["x_floor"] = stats["median_ms"] / floor
    return entry
