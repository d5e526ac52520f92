"""The suite's own asv helpers: an in-body skip with its reason, and parameter lists that only grow.

They live beside the benchmarks, not in `rlperf`, because the history runs today's suite over each
commit's `src` (asv's usual model, docs/history.md): everything a benchmark module imports at the top
must be the code it measures or the suite itself, or a commit older than the helper could not be
measured at all.

skip_point: asv_runner turns `SkipNotImplemented` raised in the body into n/a (a plain
NotImplementedError there is a failure) but prints no reason; this prints the line asv_runner prints for
a skip in setup, so the run's summary (rlperf.asvtools.run_summary) groups it with the other skips.

append_only: asv keys every stored value by its parameter values (asv/results.py `_compatible_results`),
so a list's order is the site's display order only, and a renamed value starts a new series. The
placement registry is a dict in source order, and a new placement is written beside its kin, in the
middle: the suite's lists follow PLACEMENT_ORDER instead, and a placement added later is appended after
it, in registry order.
"""

from __future__ import annotations

from asv_runner.benchmarks.mark import SkipNotImplemented



def skip_point(reason: str):
    """Raise asv's in-body skip after printing `asv: skipped: ...` with the reason."""
    print(f"asv: skipped: SkipNotImplemented({reason!r}) ", flush=True)
    raise SkipNotImplemented(reason)


# The placements in the order the asv suite listed them when every benchmark gained an explicit `version`
# (the registries' order then). Append here only; never reorder or rename.
PLACEMENT_ORDER = (
    "host", "host-pageable", "host-pipelined", "uva", "gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded",
    "gpu-cache", "host-bf16", "uva-bf16", "gpu-bf16", "gpu-fused-bf16", "gpu-compact", "host-compact",
    "torchrl-host", "torchrl-host-td", "torchrl-device", "torchrl-device-td", "shared-host", "gpu-replica",
    "rank-local", "sharded-global", "reference-host", "gpu-compact-fused", "gpu-compact-a16-fused",
    "host-numba", "uva-fused", "uva-fused-bf16",
)


def append_only(names, known=PLACEMENT_ORDER) -> list[str]:
    """`names` with those in `known` first, in `known`'s order, then the others in their own order."""
    names = list(names)
    rank = {name: i for i, name in enumerate(known)}
    return sorted(names, key=lambda name: rank.get(name, len(rank)))  # sorted() is stable: new ones keep order


__all__ = ["PLACEMENT_ORDER", "SkipNotImplemented", "append_only", "skip_point"]
