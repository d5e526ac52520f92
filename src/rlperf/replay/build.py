"""The one way a placement is built: `rlperf replay`, the asv classes and the e2e loop all come here.

Torch-free at import (the implementation class loads when a placement is built), so the e2e loop and
the asv suite can import it before they decide to run anything.
"""

from __future__ import annotations

from rlperf.workload import Workload


def build_placement(spec, workload: Workload, capacity_rows: int, *, device, threads: int, seed: int,
                    prefill: bool = True):
    """`spec`'s placement (not set up): its storage holds `capacity_rows` rows of `workload`'s layout,
    written in steps of `workload.num_envs` rows, sampled `workload.sample_rows_per_rank` at a time.
    `prefill=False` leaves the storage empty for a writer (the e2e collector) to fill."""
    return spec.load()(spec=spec, layout=workload.layout, capacity_rows=capacity_rows,
                       sample_rows=workload.sample_rows_per_rank, device=device, threads=threads, seed=seed,
                       step_rows=workload.num_envs, prefill=prefill)


__all__ = ["build_placement"]
