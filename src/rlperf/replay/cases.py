"""The replay case registry: one parameter point = (task, sim, placement, capacity, GPU count).

The CLI, the asv suite and the pytest-benchmark front end all enumerate cases from here, and all
ask `feasibility()` before allocating anything, so an infeasible point is a skip with a reason.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from rlperf.measure import guards
from rlperf.replay.multirank import feasibility as multirank_feasibility
from rlperf.replay.registry import REGISTRY, spec_of
from rlperf.workload import Workload, compose

DEFAULT_TASK, DEFAULT_SIM = "g1_motion_tracking", "motrix"
CAPACITY_EXPONENTS = (20, 22, 24, 26, 28, 30)
GPU_COUNTS = (1, 2, 4, 8)
DEFAULT_PLACEMENTS = tuple(REGISTRY)  # single-GPU placements first, rank placements last
ALL_SPECS = REGISTRY  # the historical name
QUICK_CAPACITY_ROWS = 2**16  # the inner loop's capacity (a multiple of every task's rows per step)


def default_torch_threads(world_size: int) -> int:
    """The reference's `auto`: usable cores // world size, so rank processes never oversubscribe cores.
    Usable: the process's CPU affinity, not os.cpu_count(): a process pinned to one core of two (taskset,
    a CI cpuset) ran two torch threads on it, and its gathers split into a fast and a slow mode
    (docs/history.md)."""
    return max(1, usable_cores() // world_size)


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask), where the OS reports one."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity API (macOS)
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=None)
def workload_for(task: str, sim: str) -> Workload:
    return compose(task, sim)


@dataclass(frozen=True)
class ReplayCase:
    task: str
    sim: str
    placement: str
    capacity_rows: int
    gpus: int = 1

    @property
    def workload(self) -> Workload:
        return workload_for(self.task, self.sim).with_gpus(self.gpus)

    @property
    def spec(self):
        return spec_of(self.placement)

    @property
    def key(self) -> str:
        return f"{self.task}/{self.sim}/{self.placement}/cap{self.capacity_rows}/gpus{self.gpus}"


@dataclass(frozen=True)
class Resources:
    """What the machine offers, read once (tests pass their own)."""

    cuda_devices: int
    host_available_bytes: int
    device_free_bytes: int  # free memory of the first visible GPU, 0 without CUDA

    @classmethod
    def probe(cls) -> "Resources":
        """Ask torch (imports it): the truth for points that will run."""
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        free = guards.free_device_bytes(0) if n else 0
        return cls(n, guards.available_host_bytes(), free)

    @classmethod
    def probe_cheap(cls) -> "Resources":
        """Ask NVML (measure.nvml), without importing torch: enough to skip points that cannot run here."""
        gpus = guards.visible_gpu_free_bytes()
        return cls(len(gpus), guards.available_host_bytes(), gpus[0] if gpus else 0)


def feasibility(case: ReplayCase, res: Resources) -> guards.Verdict:
    """Skip reasons, in the order a user would want to hear them; ok=True when the case can run."""
    if case.spec.multi_rank or case.gpus > 1:  # process per rank, or why not
        return multirank_feasibility(case, res)
    spec = case.spec
    wl = case.workload
    if spec.stored_layout(wl.layout).elide_next and case.capacity_rows % wl.num_envs:
        return guards.Verdict(False, f"{case.placement}: next-obs elision needs a capacity that is a multiple of "
                                     f"{wl.num_envs:,} rows per step, got {case.capacity_rows:,}")
    if spec.needs_cuda and res.cuda_devices == 0:
        return guards.Verdict(False, f"placement {case.placement!r} needs a CUDA device; none visible")
    need = spec.memory_need(wl.layout, case.capacity_rows, wl.sample_rows_per_rank)
    what = f"{case.placement} at {case.capacity_rows:,} rows"
    if need.host_bytes:
        verdict = guards.check_host(need.host_bytes, what, res.host_available_bytes)
        if not verdict.ok:
            return verdict
    if need.device_bytes and res.cuda_devices:
        verdict = guards.check_device(need.device_bytes, what, res.device_free_bytes, "cuda:0")
        if not verdict.ok:
            return verdict
    missing = spec.unavailable_reason()
    return guards.Verdict(False, missing) if missing else guards.Verdict(True)


def min_capacity_rows(wl) -> int:
    """The smallest capacity a replay of `wl` can sample from: the newest step (num_envs rows, still
    being written) is never sampled, so one row more than a step."""
    return wl.num_envs + 1


def iter_cases(task: str = DEFAULT_TASK, sim: str = DEFAULT_SIM, *, capacity_rows=None,
               placements=DEFAULT_PLACEMENTS, gpu_counts=(1,)) -> list[ReplayCase]:
    """Cases in measurement order: GPU count, capacity, placement."""
    for name in placements:
        spec_of(name)  # an unknown name or invalid combination fails here, with the valid choices or the reason
    workload_for(task, sim)  # validates task and sim with a clear error
    capacity_rows = capacity_rows or [2**e for e in CAPACITY_EXPONENTS]
    return [ReplayCase(task, sim, p, rows, g) for g in gpu_counts for rows in capacity_rows for p in placements]
