"""guard.feasibility: skip reasons decided before any process is spawned or byte allocated."""

from __future__ import annotations

from rlperf.replay.cases import ReplayCase
from rlperf.replay.multirank import feasibility
from tests.replay.multirank.tiny import CPU_BOX, GIB, H200, HGX, TinyCase


def test_gpu_counts_above_the_visible_devices_are_skipped_with_the_count():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**20, gpus=8), H200)
    assert not verdict.ok and verdict.reason == "needs 8 GPUs, 1 visible"


def test_single_process_placements_name_their_multi_gpu_forms():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "host", 2**20, gpus=2), HGX)
    assert not verdict.ok and "single-process" in verdict.reason and "shared-host" in verdict.reason


def test_shards_must_split_evenly():
    verdict = feasibility(TinyCase("rank-local", capacity_rows=4096, gpus=3), CPU_BOX, cpu_ranks=True)
    assert not verdict.ok and "equal shards" in verdict.reason


def test_device_memory_is_guarded_per_rank_and_sharding_buys_capacity():
    replica = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**26, gpus=8), HGX)
    assert not replica.ok and "per rank" in replica.reason and "GiB" in replica.reason
    sharded = ReplayCase("g1_motion_tracking", "motrix", "sharded-global", 2**28, gpus=8)
    assert feasibility(sharded, HGX).ok  # 116.25 GiB per rank: tight, within the guard
    assert not feasibility(ReplayCase("g1_motion_tracking", "motrix", "sharded-global", 2**29, gpus=8), HGX).ok


def test_the_shared_table_needs_room_in_dev_shm():
    case = ReplayCase("g1_motion_tracking", "motrix", "shared-host", 2**24, gpus=8)
    verdict = feasibility(case, HGX, shm_free=64 * 2**20)
    assert not verdict.ok and "/dev/shm" in verdict.reason and "GiB" in verdict.reason
    assert feasibility(case, HGX, shm_free=300 * GIB).ok


def test_the_gpu_count_is_checked_before_the_placement_family():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "host", 2**20, gpus=8), H200)
    assert verdict.reason == "needs 8 GPUs, 1 visible"


def test_cpu_ranks_hold_every_ranks_device_bytes_in_host_memory():
    from rlperf.replay.cases import Resources
    from rlperf.replay.multirank import RANK_SPECS

    case = TinyCase("gpu-replica", capacity_rows=4096, gpus=2)
    wl = case.workload
    one = RANK_SPECS["gpu-replica"].memory_need(wl.layout, 4096, wl.sample_rows_per_rank, 2).device_bytes
    room_for_one_and_a_half = Resources(0, int(1.5 * one / 0.8), 0)  # the host budget is 0.8 x available
    verdict = feasibility(case, room_for_one_and_a_half, cpu_ranks=True)
    assert not verdict.ok and verdict.reason.startswith("host memory") and "2 ranks" in verdict.reason
    assert feasibility(case, Resources(0, int(2.5 * one / 0.8), 0), cpu_ranks=True).ok


def test_a_missing_shared_memory_folder_has_no_room():
    from rlperf.replay.multirank.guard import shm_free_bytes

    assert shm_free_bytes("/nonexistent/rlperf-shm") == 0
