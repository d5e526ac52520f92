"""What `rlperf plan` can choose from: every named placement of the replay registry (peers included) and
every process-per-rank placement, each with the time model of its transfer and its own stored layout.

`candidates()` is the one place the plan enumerates placements. `TRANSFER_OF` maps each registry transfer
to its time model, so a new transfer without one fails a test instead of being ranked on a wrong model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rlperf.replay.layouts import StorageLayout
from rlperf.replay.registry import REGISTRY

# How a batch reaches the learner: the key of the time model in `plan.model`.
#   none: already on the device (HBM gather); h2d: CPU gather into pinned staging, then one H2D copy;
#   h2d-pageable: the same from pageable staging; h2d-repin: the gathered batch is copied once more
#   into pinned memory before the H2D (TorchRL's pin_memory); h2d-pipelined: in chunks, the gather
#   overlapping the copy; uva: a GPU kernel reads the pinned host table; cache: HBM gather from a
#   cache refreshed by DMA; exchange: sharded rows over NVLink.
TRANSFERS = ("none", "h2d", "h2d-pageable", "h2d-repin", "h2d-pipelined", "uva", "cache", "exchange")
TRANSFER_OF = {  # registry transfer (replay.placements.specs.TRANSFERS) -> time model
    "none": "none", "h2d": "h2d", "h2d-pageable": "h2d-pageable", "pipelined": "h2d-pipelined", "uva": "uva",
    "cache": "cache", "torchrl-pinned": "h2d-repin", "torchrl-td-pinned": "h2d-repin", "torchrl": "none",
    "torchrl-td": "none", "reference-h2d": "h2d", "h2d-numba": "h2d",
}
RANK_TRANSFER_OF = {"shared-host": "h2d", "gpu-replica": "none", "rank-local": "none", "sharded-global": "exchange"}


@dataclass(frozen=True)
class Candidate:
    """One choosable placement: its native layout, the row alignment its kernels need, its memory rule
    (stored layout, capacity, S, world -> host bytes per machine, device bytes per GPU) and transfer model."""

    name: str
    summary: str
    transfer: str
    layout_name: str
    align_bytes: int
    needs_cuda: bool
    multi_rank: bool
    sharded: bool
    memory: Callable[[StorageLayout, int, int, int], tuple[int, int]]


def _single(spec) -> Callable[[StorageLayout, int, int, int], tuple[int, int]]:
    def memory(lay: StorageLayout, capacity_rows: int, s: int, world: int) -> tuple[int, int]:
        need = spec.parts.memory(lay, capacity_rows, s)
        return need.host_bytes, need.device_bytes
    return memory


def _rank(spec) -> Callable[[StorageLayout, int, int, int], tuple[int, int]]:
    def memory(lay: StorageLayout, capacity_rows: int, s: int, world: int) -> tuple[int, int]:
        need = spec.memory(lay.stored_row_bytes, capacity_rows, s, world)
        return need.host_bytes, need.device_bytes
    return memory


def candidates(gpus: int = 1) -> list[Candidate]:
    """The placements a `gpus`-GPU learner can use: the registry's named ones only at one GPU,
    process-per-rank ones at any count. A transfer without a time model is a programming error (KeyError)."""
    out = []
    for spec in REGISTRY.values():
        if spec.multi_rank:
            out.append(Candidate(spec.name, spec.summary, RANK_TRANSFER_OF[spec.name], "fp32", spec.align_bytes,
                                 True, True, spec.sharded, _rank(spec)))
        elif gpus == 1:
            out.append(Candidate(spec.name, spec.summary, TRANSFER_OF[spec.transfer], spec.layout_name,
                                 16 if spec.parts.aligned_16 else 0, spec.needs_cuda, False, False, _single(spec)))
    return out
