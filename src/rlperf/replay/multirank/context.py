"""One rank's process state: its device, cores, threads and two process groups.

Data moves on the data group (NCCL on GPUs, gloo on CPU); barriers and the per-rank timing gather
use a separate gloo group, so control traffic never queues behind device work and a barrier is a
plain host-side rendezvous on every backend.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from rlperf.replay.multirank.affinity import rank_cores
from rlperf.row_layout import RowLayout

RANK_SEED_STRIDE = 1009  # the reference's per-rank generator shift: seed + rank * 1009


@dataclass(frozen=True)
class RankJob:
    """Everything a rank process needs; pickled once per rank by spawn."""

    placement: str
    layout: RowLayout
    capacity_rows: int
    sample_rows: int
    world: int
    seed: int
    warmup: int
    repeat: int
    threads: int
    use_cuda: bool
    pin_cores: bool
    init_file: str
    result_path: str
    timeout_s: float = 1800.0


@dataclass
class RankContext:
    rank: int
    world: int
    device: torch.device | None  # cuda:{rank}, or None for CPU ranks (the Placement convention)
    backend: str
    threads: int
    numa_node: int
    cores: list[int] = field(default_factory=list)
    data_group: object = None
    ctrl_group: object = None

    @property
    def tensor_device(self) -> torch.device:
        return self.device if self.device is not None else torch.device("cpu")

    @property
    def sync_devices(self) -> list:
        return [self.device] if self.device is not None else []


def init_rank(rank: int, job: RankJob) -> RankContext:
    """Pin cores, set this process's torch threads and device, join both process groups."""
    node, cores = rank_cores(rank, job.world)
    if job.pin_cores:
        os.sched_setaffinity(0, cores)
    threads = job.threads or len(cores)
    torch.set_num_threads(threads)
    device = None
    if job.use_cuda:
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    backend = "nccl" if job.use_cuda else "gloo"
    timeout = dt.timedelta(seconds=job.timeout_s)
    kwargs = {"device_id": device} if device is not None else {}
    dist.init_process_group(backend, init_method=f"file://{job.init_file}", rank=rank, world_size=job.world,
                            timeout=timeout, **kwargs)
    ctrl = dist.new_group(backend="gloo", timeout=timeout) if backend != "gloo" else dist.group.WORLD
    return RankContext(rank, job.world, device, backend, threads, node, cores, dist.group.WORLD, ctrl)
