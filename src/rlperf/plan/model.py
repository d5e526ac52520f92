"""Bytes, memory and modelled time per learner iteration of one candidate on one machine.

Rows are the layouts' own bytes (`replay.layouts`: stored rows for memory, batch rows for what moves),
the per-rank byte split is the traffic model's (`replay.multirank.traffic.rank_traffic`) and the memory
rules are the placements' own specs; this module only turns bytes into milliseconds at
the machine's measured ceilings, the same floor convention as the timing entries of `rlperf replay`
(a gather reads and writes its bytes; a copy moves them once). Formulas: docs/limits.md 1.4.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rlperf.measure import guards
from rlperf.plan.candidates import Candidate
from rlperf.plan.ceilings import MachineCeilings
from rlperf.replay.layouts import LAYOUTS as STORAGE_LAYOUTS
from rlperf.replay.layouts import StorageLayout, storage_layout
from rlperf.replay.multirank.traffic import Rates, rank_traffic
from rlperf.replay.placements.specs import CACHE_ROWS_MAX, REFRESH_PERIOD
from rlperf.row_layout import RowLayout

# --layout choices: "native" is each placement's own layout, else a registered layout for every candidate.
LAYOUTS = ("native", *STORAGE_LAYOUTS)
PIPELINE_CHUNKS = 8  # host-pipelined's chunk count (placements/host.py)
UVA_EFFICIENCY = 0.9  # SM-issued reads reach ~90% of the copy-engine rate (docs/limits.md 2.5)
NVLINK_Bps = Rates().nvlink_busbw_Bps  # not measured by the ceilings: the traffic model's [ref] figure


class Infeasible(Exception):
    """The candidate cannot run here; the message names what is needed and what is available."""


@dataclass(frozen=True)
class Estimate:
    row_bytes: int  # stored bytes per row (what a run records as stored_row_bytes)
    bytes: dict[str, float]  # per rank and iteration: h2d, host_read, device_read, interconnect_in/out
    host_bytes: int  # host memory on the machine
    device_bytes: int  # device memory per GPU
    model_ms: float
    bound_by: str  # the term that sets the time
    notes: tuple[str, ...] = ()


def stored_layout(cand: Candidate, dims: RowLayout, layout: str) -> StorageLayout:
    """The candidate's own layout ("native") or the chosen one, padded up to the placement's alignment
    (a 16-byte kernel keeps its 16-byte rows)."""
    lay = storage_layout(cand.layout_name if layout == "native" else layout, dims)
    return dataclasses.replace(lay, align_bytes=max(lay.align_bytes, cand.align_bytes))


def iteration_bytes(cand: Candidate, lay: StorageLayout, s: int, world: int, capacity_rows: int) -> dict[str, float]:
    """Bytes one rank moves per learner iteration, in the keys the placements report: a batch moves
    batch rows (elision saves storage, not traffic), the cache refreshes stored rows."""
    row = lay.batch_row_bytes
    if cand.transfer in ("h2d", "h2d-pageable", "h2d-repin", "h2d-pipelined", "uva"):
        return rank_traffic("shared-host", row, s, world)
    if cand.transfer == "none":
        return rank_traffic("gpu-replica", row, s, world)
    if cand.transfer == "exchange":
        return rank_traffic("sharded-global", row, s, world)
    if cand.transfer == "cache":
        block = min(capacity_rows, CACHE_ROWS_MAX) // REFRESH_PERIOD * lay.stored_row_bytes
        return {"h2d": float(block), "host_read": float(block), "device_read": float(s * row),
                "interconnect_in": 0.0, "interconnect_out": 0.0}
    raise KeyError(cand.transfer)


def _ms(nbytes: float, rate: float) -> float:
    return nbytes / rate * 1e3


def model_ms(cand: Candidate, b: dict[str, float], world: int, ceil: MachineCeilings) -> tuple[float, str, tuple]:
    """(ms per iteration, the bounding term, notes) at the machine's ceilings: a floor, not a forecast."""
    def need(rate, what):
        if rate is None:
            raise Infeasible(f"{cand.name} needs the {what} ceiling; {ceil.machine} has no CUDA device")
        return rate

    t = cand.transfer
    if t == "none":
        return _ms(2 * b["device_read"], need(ceil.d2d_Bps, "HBM")), "HBM gather", ()
    if t == "exchange":
        gather = _ms(2 * b["device_read"], need(ceil.d2d_Bps, "HBM"))
        return gather + _ms(b["interconnect_in"], NVLINK_Bps), "HBM gather + NVLink", (
            f"NVLink at {NVLINK_Bps / 1e9:.0f} GB/s is assumed, not measured",)
    gather = _ms(world * 2 * b["host_read"], ceil.host_copy_Bps)  # ranks share the host's memory bandwidth
    if t in ("h2d", "h2d-pageable", "h2d-repin") and not ceil.cuda:
        return gather, "host gather", ("no CUDA device: the batch stays on the host",)
    if t in ("h2d", "h2d-pageable"):
        notes = ("pageable H2D modelled at the pinned rate (no pageable ceiling is measured): a lower bound",
                 ) if t == "h2d-pageable" else ()
        return gather + _ms(b["h2d"], need(ceil.h2d_Bps, "H2D")), "host gather + H2D", notes
    if t == "h2d-repin":
        repin = _ms(world * 2 * b["h2d"], ceil.host_copy_Bps)
        return gather + repin + _ms(b["h2d"], need(ceil.h2d_Bps, "H2D")), "host gather + pin copy + H2D", ()
    if t == "h2d-pipelined":
        longest = max(gather, _ms(b["h2d"], need(ceil.h2d_Bps, "H2D")))
        return longest * (1 + 1 / PIPELINE_CHUNKS), "max(gather, H2D) + one chunk", ()
    if t == "uva":
        return _ms(b["h2d"], UVA_EFFICIENCY * need(ceil.h2d_Bps, "H2D")), "PCIe reads (UVA)", ()
    if t == "cache":
        hbm = _ms(2 * b["device_read"], need(ceil.d2d_Bps, "HBM"))
        dma = _ms(b["h2d"], need(ceil.h2d_Bps, "H2D"))
        return max(hbm, dma), "cache refresh DMA" if dma > hbm else "HBM gather", (
            f"samples a rotating cache of min(C, {CACHE_ROWS_MAX:,}) rows, not all C",)
    raise KeyError(t)


def estimate(cand: Candidate, *, obs: int, act: int, critic: int, sample_rows: int, capacity_rows: int, world: int,
             layout: str, ceil: MachineCeilings) -> Estimate:
    """The candidate's bytes, memory and modelled time; raises Infeasible with the reason when it cannot run."""
    lay = stored_layout(cand, RowLayout(obs, act, critic), layout)
    host, device = cand.memory(lay, capacity_rows, sample_rows, world)
    b = iteration_bytes(cand, lay, sample_rows, world, capacity_rows)
    what = f"{cand.name} at {capacity_rows:,} rows" + (f" on {world} ranks" if cand.multi_rank else "")
    if cand.needs_cuda and not ceil.cuda:
        raise Infeasible(f"{cand.name} needs a CUDA device; {ceil.machine} has none")
    if cand.multi_rank and world > ceil.gpu_count:
        raise Infeasible(f"needs {world} GPUs, {ceil.machine} has {ceil.gpu_count}")
    if cand.sharded and capacity_rows % world:
        raise Infeasible(f"capacity {capacity_rows:,} rows does not split into {world} equal shards")
    if host:
        verdict = guards.check_host(host, what, ceil.host_free_bytes)
        if not verdict.ok:
            raise Infeasible(verdict.reason)
    if device and ceil.cuda:
        verdict = guards.check_device(device, what + (" (per rank)" if cand.multi_rank else ""),
                                      ceil.device_free_bytes, "each GPU" if cand.multi_rank else "cuda:0")
        if not verdict.ok:
            raise Infeasible(verdict.reason)
    ms, bound, notes = model_ms(cand, b, world, ceil)
    return Estimate(lay.stored_row_bytes, b, host, device, ms, bound, notes)
