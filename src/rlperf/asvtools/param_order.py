"""asv parameter lists that only grow at the end, whatever order a registry lists its entries in.

asv keys every stored value by its parameter values (asv/results.py `_compatible_results`), so a list's
order is the site's display order only, and a renamed value starts a new series. The placement
registries are dicts in source order, and a new placement is written beside its kin, in the middle
(rlperf.replay.registry.REGISTRY puts the multi-rank placements last): the suite's lists follow this
fixed order instead, and a placement added later is appended after it, in registry order.
"""

from __future__ import annotations

# The placements in the order the asv suite listed them when every benchmark gained an explicit `version`
# (the registries' order then). Append here only; never reorder or rename.
PLACEMENT_ORDER = (
    "host", "host-pageable", "host-pipelined", "uva", "gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded",
    "gpu-cache", "host-bf16", "uva-bf16", "gpu-bf16", "gpu-fused-bf16", "gpu-compact", "host-compact",
    "torchrl-host", "torchrl-host-td", "torchrl-device", "torchrl-device-td", "shared-host", "gpu-replica",
    "rank-local", "sharded-global", "reference-host", "gpu-compact-fused",
)


def append_only(names, known=PLACEMENT_ORDER) -> list[str]:
    """`names` with those in `known` first, in `known`'s order, then the others in their own order."""
    names = list(names)
    rank = {name: i for i, name in enumerate(known)}
    return sorted(names, key=lambda name: rank.get(name, len(rank)))  # sorted() is stable: new ones keep order


__all__ = ["PLACEMENT_ORDER", "append_only"]
