"""Run one multi-GPU replay case with one spawned process per rank (not a thread per rank).

The launcher guards the point, creates the shared host table once (shared-host), spawns `case.gpus`
ranks with torch.multiprocessing (NCCL on GPUs, gloo on CPU ranks), and turns rank 0's report into
a `CaseOutcome` whose result entry matches replay.run's, plus `per_rank` and `traffic` blocks.
"""

from __future__ import annotations

import gc
import json
import tempfile
from pathlib import Path

import torch.multiprocessing as mp

from rlperf.replay.multirank import worker
from rlperf.replay.multirank.context import RankJob
from rlperf.replay.multirank.guard import feasibility
from rlperf.replay.multirank.rank_tables import shared_host_table
from rlperf.replay.multirank.result import assemble
from rlperf.replay.multirank.specs import RANK_SPECS
from rlperf.replay.records import CaseOutcome, skip_record


def run_multirank_case(case, res, *, warmup: int, repeat: int, seed: int, ceilings: dict | None = None,
                       cpu_ranks: bool = False, threads: int | None = None, pin_cores: bool = True,
                       timeout_s: float = 1800.0) -> CaseOutcome:
    """Measure `case` on `case.gpus` rank processes; infeasible points come back as skips with reasons.

    `cpu_ranks=True` runs the ranks on the CPU with gloo (tests and development); `threads` overrides
    the per-rank torch threads (default: that rank's share of the visible cores).
    """
    verdict = feasibility(case, res, cpu_ranks=cpu_ranks)
    if not verdict.ok:
        return CaseOutcome(skipped=[skip_record(case, verdict.reason)])
    spec = RANK_SPECS[case.placement]
    wl = case.workload
    layout = wl.layout
    shared = (shared_host_table(case.capacity_rows, spec.stored_layout(layout).stored_width)
              if spec.shared_host_table else None)
    try:
        with tempfile.TemporaryDirectory(prefix="rlperf-ranks-") as tmp:
            job = RankJob(placement=case.placement, layout=layout, capacity_rows=case.capacity_rows,
                          sample_rows=wl.sample_rows_per_rank, world=case.gpus, seed=seed, warmup=warmup,
                          repeat=repeat, threads=threads or 0, use_cuda=not cpu_ranks, pin_cores=pin_cores,
                          init_file=str(Path(tmp) / "pg"), result_path=str(Path(tmp) / "rank0.json"),
                          timeout_s=timeout_s)
            mp.spawn(worker.main, args=(job, shared), nprocs=case.gpus, join=True)
            report = json.loads(Path(job.result_path).read_text())
    finally:
        del shared
        gc.collect()
    if "skip" in report:
        return CaseOutcome(skipped=[skip_record(case, report["skip"])])
    outcome = CaseOutcome(skipped=[skip_record(case, s["reason"], s["metric"]) for s in report["skipped"]])
    if any(r["timings"] for r in report["ranks"]):
        outcome.result = assemble(case, spec, report["ranks"], warmup=warmup, repeat=repeat, ceilings=ceilings)
    return outcome


__all__ = ["run_multirank_case"]
