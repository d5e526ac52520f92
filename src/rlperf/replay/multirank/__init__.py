"""Multi-GPU replay with one process per rank (docs/workloads.md A9, docs/limits.md 2.7, 2.8).

Torch-free at import, like `replay.placements`: specs, guards and the traffic model decide skips
and predictions without loading torch; `run_multirank_case` loads the launcher only when a case runs.
"""

from __future__ import annotations

from rlperf.replay.multirank.guard import feasibility
from rlperf.replay.multirank.specs import RANK_SPECS, RankMemoryNeed, RankSpec


def run_multirank_case(case, res, *, warmup: int, repeat: int, seed: int, **kw):
    """Spawn `case.gpus` rank processes and measure `case` (see launcher.run_multirank_case)."""
    from rlperf.replay.multirank.launcher import run_multirank_case as run

    return run(case, res, warmup=warmup, repeat=repeat, seed=seed, **kw)


__all__ = ["RANK_SPECS", "RankMemoryNeed", "RankSpec", "feasibility", "run_multirank_case"]
