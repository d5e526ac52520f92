"""Shared set-up of the multirank tests: machines to guard against, a tiny workload (S = 256 rows of
3,720 B), a ReplayCase stand-in, one cached 2-rank gloo run per placement, and a rank placement built
in this process."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from rlperf.replay.cases import Resources
from rlperf.replay.multirank import RANK_SPECS, run_multirank_case
from rlperf.workload import Workload, compose

GIB = 2**30
CPU_BOX = Resources(0, 16 * GIB, 0)
H200 = Resources(1, 125 * GIB, 139 * GIB)
HGX = Resources(8, 550 * GIB, 139 * GIB)
TINY = ("algo.batch_size=128", "algo.updates_per_step=2")  # S = 256 rows of 3,720 B


@functools.lru_cache(maxsize=None)
def tiny_workload() -> Workload:
    return compose("g1_motion_tracking", "motrix", list(TINY))


@dataclass(frozen=True)
class TinyCase:
    """A ReplayCase stand-in with a tiny per-rank batch (the harness reads only these fields)."""

    placement: str
    capacity_rows: int = 4096
    gpus: int = 2

    @property
    def workload(self) -> Workload:
        return tiny_workload().with_gpus(self.gpus)


@functools.lru_cache(maxsize=None)
def cpu_run(placement: str):
    """One spawned 2-rank gloo run per placement, shared by the tests (of every file) that read it."""
    return run_multirank_case(TinyCase(placement), CPU_BOX, warmup=1, repeat=4, seed=7, cpu_ranks=True)


def build(name: str, ctx, capacity: int = 1024):
    """The rank placement `name`, set up on `ctx` in this process (the `one_rank` fixture's group)."""
    from rlperf.replay.multirank.rank_tables import shared_host_table

    spec, wl = RANK_SPECS[name], tiny_workload()
    shared = shared_host_table(capacity, wl.layout.width) if spec.shared_host_table else None
    p = spec.load()(ctx=ctx, shared_table=shared, spec=spec, layout=wl.layout, capacity_rows=capacity,
                    sample_rows=wl.sample_rows_per_rank, device=None, threads=1, seed=1)
    p.setup()
    return p
