"""Ceilings bound what they are quoted against, and a floor is the slowest resource at its ceiling."""

from __future__ import annotations

import pytest
import torch

from rlperf.measure import ceilings
from rlperf.measure.ceilings import DEVICE_ALLOCATIONS, measure_ceilings, pool_slices, rotating_copy
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE
from rlperf.replay.placements.base import GPU_INNER
from rlperf.replay.records import floor_ms, resource_bytes, timing_entry


def test_each_copy_reads_the_next_slice_of_the_pool_into_one_destination():
    dst, pool = torch.zeros(4), torch.arange(16, dtype=torch.float32)
    copy = rotating_copy(dst, pool)
    seen = []
    for _ in range(5):
        copy()
        seen.append(dst[0].item())
    assert seen == [0.0, 4.0, 8.0, 12.0, 0.0]


def test_the_pool_is_several_batches_and_at_least_the_pool_size():
    assert pool_slices(100, 1000) == 10 and pool_slices(1000, 1000) == 4


def test_the_host_ceiling_is_measured_with_the_batch_size_and_counts_read_plus_write():
    out = measure_ceilings(None, threads=1, repeat=2, nbytes=1 << 16, pool_bytes=1 << 20)
    assert out["buffer_bytes"] == 1 << 16 and out["pool_bytes"] == 1 << 20 and out["host_copy_threads"] == 1
    assert out["host_copy_Bps"] > 0 and "h2d_pinned_Bps" not in out  # no CUDA: no device ceilings
    with pytest.raises(ValueError):
        measure_ceilings(None, threads=1, nbytes=2)


def test_device_copies_are_timed_as_the_gathers_they_bound(monkeypatch):
    # one copy a window on an idle stream also timed the host's launch latency: 3.76 against 4.09 TB/s on the H200
    seen = {}

    def fake_time_cuda(fn, **kw):
        seen.update(kw)
        return [1.0]

    monkeypatch.setattr(ceilings, "time_cuda", fake_time_cuda)
    assert ceilings._device_ms(lambda: None, 3) == [1.0]
    assert seen["inner"] == GPU_INNER == ceilings.DEVICE_INNER and seen["run_ahead"] is True and seen["repeat"] == 3


@pytest.mark.gpu
def test_the_device_copy_ceiling_is_the_best_of_several_allocations():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    out = measure_ceilings(torch.device("cuda", 0), threads=1, repeat=3, nbytes=1 << 22, pool_bytes=1 << 25)
    rates = out["d2d_Bps_per_allocation"]
    assert len(rates) == DEVICE_ALLOCATIONS and out["d2d_Bps"] == max(rates) > 0 and out["h2d_pinned_Bps"] > 0


CEILINGS = {"host_copy_Bps": 10e9, "h2d_pinned_Bps": 50e9, "d2d_Bps": 4000e9}


def test_a_cache_end_to_end_floor_is_its_refresh_over_pcie_not_the_whole_batch():
    batch, block = 122_159_104, 61_079_552  # 32,768 padded rows; the 2^22-row cache's 1/256 refresh
    per_sample = {"h2d": block, "host_read": block, "device_read": batch}
    floor = floor_ms(resource_bytes(END_TO_END, per_sample), CEILINGS)
    assert floor == pytest.approx(block / 50e9 * 1e3)  # the slower of refresh DMA and HBM gather
    assert floor < batch / 50e9 * 1e3


def test_a_floor_is_the_slowest_resource_and_ignores_missing_ceilings():
    assert floor_ms({"h2d_pinned_Bps": 50_000_000, "d2d_Bps": 8_000_000_000}, CEILINGS) == pytest.approx(2.0)
    assert floor_ms({"d2d_Bps": 1000}, {"host_copy_Bps": 1.0}) is None
    gather = resource_bytes(CPU_SAMPLE, {"h2d": 0, "host_read": 100, "device_read": 0})
    assert gather == {"host_copy_Bps": 200} and resource_bytes(GPU_SAMPLE, {"h2d": 0, "host_read": 0,
                                                                            "device_read": 7}) == {"d2d_Bps": 14}


def test_x_floor_is_the_median_over_the_floor():
    entry = timing_entry([2.0, 4.0, 6.0], END_TO_END, 100e6, warmup=0, repeat=3, ceilings=CEILINGS, clock="wall",
                         resources={"h2d_pinned_Bps": 100_000_000, "d2d_Bps": 0})
    assert entry["floor_ms"] == pytest.approx(2.0) and entry["x_floor"] == pytest.approx(2.0)
