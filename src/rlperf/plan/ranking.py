"""Rank the candidates by modelled time, then memory; infeasible ones last with their reason; each row
carries the last measured figure of the same point (placement, GPUs, capacity, stored row) if the run has one."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlperf.plan.candidates import candidates
from rlperf.plan.ceilings import MachineCeilings
from rlperf.plan.model import Estimate, Infeasible, estimate
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE

# The measured quantity closest to "one learner batch is on the learner's device", best first.
MEASURED_PREFERENCE = (END_TO_END, GPU_SAMPLE, CPU_SAMPLE)


@dataclass(frozen=True)
class Measured:
    median_ms: float
    metric: str
    capacity_rows: int


@dataclass(frozen=True)
class PlanRow:
    name: str
    transfer: str
    summary: str
    estimate: Estimate | None  # None when infeasible
    reason: str = ""  # why it is infeasible
    measured: Measured | None = None
    measured_note: str = ""  # why there is no measured figure beside the model
    notes: tuple[str, ...] = field(default=())

    @property
    def feasible(self) -> bool:
        return self.estimate is not None


def last_measured(doc: dict | None, name: str, world: int, capacity_rows: int,
                  row: int | None) -> tuple[Measured | None, str]:
    """The run's figure for this exact point, or why there is none."""
    if doc is None:
        return None, "no run loaded (ceilings measured now)"
    for r in doc.get("results", []):
        if (r.get("placement"), r.get("world_size"), r.get("capacity_rows")) != (name, world, capacity_rows):
            continue
        if row is not None and r.get("stored_row_bytes") not in (None, row):
            return None, f"measured with {r['stored_row_bytes']:,} B rows, not {row:,}"
        timings = r.get("timings", {})
        for metric in MEASURED_PREFERENCE:
            if metric in timings:
                return Measured(float(timings[metric]["median_ms"]), metric, capacity_rows), ""
    for s in doc.get("skipped", []):
        if (s.get("placement"), s.get("world_size"), s.get("capacity_rows"), s.get("metric")) == (
                name, world, capacity_rows, None):
            return None, f"skipped in the run: {s.get('reason', '')}"
    return None, "not measured at this point"


def plan(*, obs: int, act: int, critic: int, sample_rows: int, capacity_rows: int, gpus: int, layout: str,
         ceil: MachineCeilings, results: dict | None = None) -> list[PlanRow]:
    """Every candidate for `gpus` GPUs, feasible ones ranked by (model ms, device bytes, host bytes)."""
    ok, bad = [], []
    for cand in candidates(gpus):
        try:
            est = estimate(cand, obs=obs, act=act, critic=critic, sample_rows=sample_rows,
                           capacity_rows=capacity_rows, world=gpus, layout=layout, ceil=ceil)
        except Infeasible as exc:
            measured, _ = last_measured(results, cand.name, gpus, capacity_rows, None)
            bad.append(PlanRow(cand.name, cand.transfer, cand.summary, None, reason=str(exc), measured=measured))
            continue
        measured, note = last_measured(results, cand.name, gpus, capacity_rows, est.row_bytes)
        ok.append(PlanRow(cand.name, cand.transfer, cand.summary, est, measured=measured, measured_note=note,
                          notes=est.notes))
    ok.sort(key=lambda r: (r.estimate.model_ms, r.estimate.device_bytes, r.estimate.host_bytes, r.name))
    return ok + bad
