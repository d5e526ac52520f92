"""The one placement registry: every named placement, single-process and one-process-per-rank.

`REGISTRY` maps each name to its spec, the single-GPU placements (`placements.PLACEMENTS`) first and the
rank placements (`multirank.RANK_SPECS`) last: the order `rlperf replay --placements` lists and the asv
parameter lists follow (benchmarks/_suite.py). A caller asks the spec how it runs
(`spec.multi_rank`, `spec.world_size`) instead of which table it came from. Torch-free.
"""

from __future__ import annotations

from rlperf.errors import choice_error
from rlperf.replay.multirank.specs import RANK_SPECS
from rlperf.replay.placements.specs import PLACEMENTS, lookup

REGISTRY = {**PLACEMENTS, **RANK_SPECS}


def spec_of(placement: str):
    """A registered placement, or a `storage=...,sampler=...` combination (UsageError naming the choices)."""
    if placement in REGISTRY:
        return REGISTRY[placement]
    if "=" not in placement:
        raise choice_error("placement", placement, REGISTRY)
    return lookup(placement)


def multi_rank_placements() -> tuple[str, ...]:
    return tuple(name for name, spec in REGISTRY.items() if spec.multi_rank)


__all__ = ["REGISTRY", "multi_rank_placements", "spec_of"]
