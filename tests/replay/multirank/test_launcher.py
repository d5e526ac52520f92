"""launcher.run_multirank_case: spawned ranks (2 gloo CPU ranks on tiny capacities; 2 NCCL GPU ranks
`gpu`-marked) give a verified entry with replay.run's shape, and infeasible points come back as skips."""

from __future__ import annotations

import pytest
import torch

from rlperf.replay.cases import ReplayCase, Resources
from rlperf.replay.metrics import CPU_SAMPLE, GPU_SAMPLE
from rlperf.replay.multirank import RANK_SPECS, run_multirank_case
from tests.replay.multirank.tiny import H200, cpu_run


@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_every_rank_verifies_its_batch_and_the_entry_has_the_run_py_shape(placement):
    outcome = cpu_run(placement)
    res = outcome.result
    assert res is not None, outcome.skipped
    assert res["verified"] is True and res["harness"] == "process-per-rank" and res["backend"] == "gloo"
    assert (res["placement"], res["world_size"], res["capacity_rows"]) == (placement, 2, 4096)
    assert [r["rank"] for r in res["per_rank"]] == [0, 1]
    assert res["global_sample_new_ratio"] == 2 * res["sample_new_ratio_per_rank"]
    expected = {CPU_SAMPLE} if placement == "shared-host" else {GPU_SAMPLE}
    assert set(res["timings"]) == expected
    for t in res["timings"].values():
        assert len(t["samples_ms"]) == 4 and t["min_ms"] <= t["median_ms"] <= t["max_ms"]
        assert t["clock"].endswith("max over ranks") and t["bytes_moved"] > 0


def test_gpu_counts_above_the_visible_devices_are_skipped_without_spawning():
    outcome = run_multirank_case(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**20, gpus=8), H200,
                                 warmup=0, repeat=1, seed=0)
    assert outcome.result is None and outcome.skipped[0]["reason"] == "needs 8 GPUs, 1 visible"


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA devices")
@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_two_gpu_ranks_with_nccl_verify_and_time_every_metric(placement):
    case = ReplayCase("g1_motion_tracking", "motrix", placement, 2**16, gpus=2)
    outcome = run_multirank_case(case, Resources.probe(), warmup=1, repeat=3, seed=5)
    assert outcome.result is not None, outcome.skipped
    assert outcome.result["backend"] == "nccl"
    assert set(outcome.result["timings"]) == set(RANK_SPECS[placement].metrics)
