"""The replay API as the suite calls it, over the shapes it had in the history.

The history runs today's suite over each commit's `src` (asv's model, docs/history.md), so a call whose
home moved must still reach the commit's own code: before d428174 a placement was built by
`rlperf.replay.run.build_placement(case, ...)` and a multi-rank placement was one named in
`rlperf.replay.multirank.RANK_SPECS` (the spec had no `multi_rank`). Only call sites move here; what is
measured (the commit's placement, its `measure()`) is the commit's own.
"""

from __future__ import annotations

import os


def is_multi_rank(name: str, spec) -> bool:
    """Whether placement `name` runs one process per rank."""
    flag = getattr(spec, "multi_rank", None)
    if flag is not None:
        return bool(flag)
    from rlperf.replay.multirank import RANK_SPECS

    return name in RANK_SPECS


def torch_threads(gpus: int) -> int:
    """Torch intra-op threads of one rank: usable cores // GPUs, decided by the suite (a measurement
    condition, not the code under test). Usable = the affinity mask: older commits' rule counted
    os.cpu_count(), so a backfill pinned to one core of two ran two threads on it (docs/history.md)."""
    try:
        cores = len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity API (macOS)
        cores = os.cpu_count() or 1
    return max(1, cores // gpus)


def build(case, *, threads: int, seed: int):
    """The case's placement, not set up, built by the commit's own builder."""
    from rlperf.replay.run import learner_device

    try:
        from rlperf.replay.build import build_placement
    except ImportError:  # before d428174
        from rlperf.replay.run import build_placement as build_case

        return build_case(case, threads=threads, seed=seed)
    return build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(),
                           threads=threads, seed=seed)
