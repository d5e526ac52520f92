"""What `rlperf plan` can choose from: every registered placement, with the transfer that shapes its model.

`candidates()` is the one place the plan enumerates placements. It reads today's spec tables
(single-process, peers, process-per-rank); when the replay package becomes storage x sampler x
transfer, point it at the new registry and take `transfer` from the combination instead of `TRANSFER_OF`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rlperf.replay.multirank.specs import RANK_SPECS
from rlperf.replay.peers import PEER_SPECS
from rlperf.replay.placements.specs import SPECS

# How a batch reaches the learner, per placement: the key of the time model in `plan.model`.
#   none: already on the device (HBM gather); h2d: CPU gather into pinned staging, then one H2D copy;
#   h2d-pageable: the same from pageable staging; h2d-repin: the gathered batch is copied once more
#   into pinned memory before the H2D (TorchRL's pin_memory); h2d-pipelined: in chunks, the gather
#   overlapping the copy; uva: a GPU kernel reads the pinned host table; cache: HBM gather from a
#   cache refreshed by DMA; exchange: sharded rows over NVLink.
TRANSFER_OF = {
    "host": "h2d", "host-pageable": "h2d-pageable", "host-pipelined": "h2d-pipelined", "uva": "uva",
    "gpu": "none", "gpu-padded": "none", "gpu-fused": "none", "gpu-fused-padded": "none", "gpu-cache": "cache",
    "torchrl-host": "h2d-repin", "torchrl-host-td": "h2d-repin", "torchrl-device": "none", "torchrl-device-td": "none",
    "shared-host": "h2d", "gpu-replica": "none", "rank-local": "none", "sharded-global": "exchange",
}
TRANSFERS = ("none", "h2d", "h2d-pageable", "h2d-repin", "h2d-pipelined", "uva", "cache", "exchange")


@dataclass(frozen=True)
class Candidate:
    """One choosable placement: its memory rule (host, device bytes per machine / per GPU) and transfer."""

    name: str
    summary: str
    transfer: str
    align_bytes: int
    needs_cuda: bool
    multi_rank: bool
    sharded: bool
    memory: Callable[[int, int, int, int], tuple[int, int]]  # (row bytes, capacity, S, world) -> bytes


def _single(spec) -> Callable[[int, int, int, int], tuple[int, int]]:
    def memory(row: int, cap: int, s: int, world: int) -> tuple[int, int]:
        need = spec.memory(row, cap, s)
        return need.host_bytes, need.device_bytes
    return memory


def _rank(spec) -> Callable[[int, int, int, int], tuple[int, int]]:
    def memory(row: int, cap: int, s: int, world: int) -> tuple[int, int]:
        need = spec.memory(row, cap, s, world)
        return need.host_bytes, need.device_bytes
    return memory


def candidates(gpus: int = 1) -> list[Candidate]:
    """The placements a `gpus`-GPU learner can use: single-process ones and peers only at one GPU,
    process-per-rank ones at any count. A spec without a known transfer is a programming error."""
    out = []
    if gpus == 1:
        for spec in (*SPECS.values(), *PEER_SPECS.values()):
            out.append(Candidate(spec.name, spec.summary, TRANSFER_OF[spec.name], spec.align_bytes,
                                 spec.needs_cuda, False, False, _single(spec)))
    for spec in RANK_SPECS.values():
        out.append(Candidate(spec.name, spec.summary, TRANSFER_OF[spec.name], spec.align_bytes, True, True,
                             spec.sharded, _rank(spec)))
    return out
