"""context: a CPU rank joins one gloo group for data and control and takes its threads and cores."""

from __future__ import annotations

import pytest
import torch

from rlperf.replay.multirank.affinity import rank_cores
from rlperf.replay.multirank.context import RankContext, RankJob, init_rank
from tests.replay.multirank.tiny import tiny_workload


def test_cpu_ranks_use_host_tensors_and_have_no_device_to_synchronise():
    cpu = RankContext(0, 2, None, "gloo", 1, 0)
    assert cpu.tensor_device == torch.device("cpu") and cpu.sync_devices == []
    gpu = RankContext(1, 2, torch.device("cuda", 1), "nccl", 8, 0)
    assert gpu.tensor_device == torch.device("cuda", 1) and gpu.sync_devices == [torch.device("cuda", 1)]


@pytest.mark.parametrize("threads", [1, 0])
def test_a_cpu_rank_joins_one_gloo_group_for_data_and_control(tmp_path, threads):
    import torch.distributed as dist

    job = RankJob("gpu-replica", tiny_workload().layout, 1024, 256, world=1, seed=0, warmup=0, repeat=1,
                  threads=threads, use_cuda=False, pin_cores=False, init_file=str(tmp_path / "pg"),
                  result_path=str(tmp_path / "rank0.json"))
    before = torch.get_num_threads()
    try:
        ctx = init_rank(0, job)
        node, cores = rank_cores(0, 1)
        assert (ctx.rank, ctx.world, ctx.device, ctx.backend) == (0, 1, None, "gloo")
        assert (ctx.numa_node, ctx.cores) == (node, cores)
        assert ctx.threads == (threads or len(cores)) == torch.get_num_threads()  # 0: the rank's share of cores
        assert ctx.data_group is ctx.ctrl_group is dist.group.WORLD  # gloo already is a host-side rendezvous
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        torch.set_num_threads(before)
