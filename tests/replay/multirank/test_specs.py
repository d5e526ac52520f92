"""specs: what each rank placement needs per machine (host, /dev/shm) and per GPU, without torch."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlperf.replay.multirank.specs import RANK_SPECS, SHARDED_BATCH_BUFFERS, SHARDED_INDEX_BUFFERS
from rlperf.replay.placements.specs import INDEX_BYTES
from tests.replay.multirank.tiny import tiny_workload

ROW, CAP, S = 3720, 2**20, 256


def test_the_shared_host_table_counts_once_however_many_ranks_read_it():
    one, eight = (RANK_SPECS["shared-host"].memory(ROW, CAP, S, n) for n in (1, 8))
    assert one.shm_bytes == eight.shm_bytes == CAP * ROW  # the table, in /dev/shm, once
    assert eight.host_bytes - one.host_bytes == 7 * S * (ROW + INDEX_BYTES)  # only staging + indices per rank
    assert one.device_bytes == eight.device_bytes == S * ROW  # one batch on each GPU


def test_a_replica_holds_the_whole_table_on_every_gpu_and_a_shard_its_share():
    replica, local, sharded = (RANK_SPECS[p].memory(ROW, CAP, S, 4)
                               for p in ("gpu-replica", "rank-local", "sharded-global"))
    assert replica == RANK_SPECS["gpu-replica"].memory(ROW, CAP, S, 1)  # independent of the rank count
    assert replica.host_bytes == local.host_bytes == sharded.host_bytes == 0
    assert replica.device_bytes - local.device_bytes == (CAP - CAP // 4) * ROW
    # sharded-global also holds the rows it receives and serves, and the request buffers
    assert sharded.device_bytes - local.device_bytes == ((SHARDED_BATCH_BUFFERS - 2) * S * ROW
                                                         + (SHARDED_INDEX_BUFFERS - 1) * S * INDEX_BYTES)


def test_memory_is_sized_on_the_stored_row_so_padding_costs_memory():
    layout = tiny_workload().layout
    spec = RANK_SPECS["gpu-replica"]
    padded = replace(spec, align_bytes=64)
    assert spec.memory_need(layout, CAP, S, 2) == spec.memory(layout.stored_row_bytes, CAP, S, 2)
    wider = padded.stored_layout(layout).stored_row_bytes
    assert wider % 64 == 0 and wider > layout.stored_row_bytes
    assert padded.memory_need(layout, CAP, S, 2) == spec.memory(wider, CAP, S, 2)


def test_world_size_zero_means_any_number_of_ranks():
    assert all(s.world_size == 0 and s.multi_rank for s in RANK_SPECS.values())
    assert not replace(RANK_SPECS["gpu-replica"], world_size=1).multi_rank


@pytest.mark.parametrize("name", list(RANK_SPECS))
def test_every_spec_loads_a_rank_class_with_a_step_for_each_of_its_metrics(name):
    spec = RANK_SPECS[name]
    cls = spec.load()
    assert cls.__name__ == spec.impl.split(":")[1] and callable(cls.step)
