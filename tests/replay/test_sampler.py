"""Samplers: seeded and deterministic, uniform with replacement over the sampleable rows only, and the
counter-based draw equal to splitmix64 written out independently (the fused kernel's arithmetic)."""

import numpy as np
import pytest
import torch
from scipy import stats

from rlperf.replay.layouts import storage_layout
from rlperf.replay.sampler import SAMPLERS, CounterSampler, make_sampler
from rlperf.replay.storage import Storage
from tests.replay.replay_steps import ENVS, TINY, step

M64 = 2**64 - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def _filled(steps: int, capacity: int = 16) -> Storage:
    st = Storage(storage_layout("fp32", TINY), capacity, step_rows=ENVS)
    for t in range(steps):
        st.add(**step(t))
    return st


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_seed_fixes_the_indices_and_another_seed_changes_them(name):
    st = _filled(3)
    draw = lambda seed: make_sampler(name, seed=seed).sample(st, torch.empty(64, dtype=torch.int64))  # noqa: E731
    assert torch.equal(draw(1), draw(1)) and not torch.equal(draw(1), draw(2))


@pytest.mark.parametrize("name", SAMPLERS)
def test_indices_cover_the_filled_rows_uniformly_and_skip_the_newest_step(name):
    st = _filled(3, capacity=64)  # rows 0..11 filled, 8..11 the newest step
    idx = make_sampler(name, seed=0).sample(st, torch.empty(8000, dtype=torch.int64))
    counts = np.bincount(idx.numpy(), minlength=8)
    assert idx.min() >= 0 and idx.max() < 8 and len(counts) == 8
    assert stats.chisquare(counts).pvalue > 1e-4


@pytest.mark.parametrize("name", SAMPLERS)
def test_after_wraparound_indices_start_at_the_oldest_row(name):
    st = _filled(6)  # 24 rows into 16: oldest step at rows 8..11, newest at 4..7
    idx = set(make_sampler(name, seed=3).sample(st, torch.empty(2000, dtype=torch.int64)).tolist())
    assert idx == set(range(16)) - {4, 5, 6, 7}


def test_counter_draws_are_splitmix64_of_seed_tick_and_row():
    sampler = CounterSampler(seed=12345)
    got = sampler.draws(1000, n=5, tick=7)
    want = [_splitmix64(12345 ^ _splitmix64(7 * 5 + r)) % 1000 for r in range(5)]
    assert got.tolist() == want


def test_counter_ticks_advance_per_call_so_batches_differ():
    sampler = CounterSampler(seed=1)
    a, b = torch.empty(16, dtype=torch.int64), torch.empty(16, dtype=torch.int64)
    sampler.draw(1000, a)
    sampler.draw(1000, b)
    assert not torch.equal(a, b) and sampler.tick == 2


@pytest.mark.parametrize("name", SAMPLERS)
def test_an_empty_range_is_refused(name):
    with pytest.raises(RuntimeError, match="no sampleable rows"):
        make_sampler(name, seed=0).draw(0, torch.empty(4, dtype=torch.int64))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["gpu-fused-padded", "gpu-fused", "uva-fused-bf16"])
def test_the_fused_kernel_draws_what_the_host_oracle_draws(name):
    """On a GPU: the sample kernel's indices equal CounterSampler.draws for the same seed and tick, pass after pass
    (a draw read stale would repeat an earlier pass's), for the split fp32 gather and the zero-copy fused gather too."""
    from rlperf.replay.cases import ReplayCase
    from rlperf.replay.build import build_placement
    from rlperf.replay.run import learner_device

    case = ReplayCase("g1_motion_tracking", "motrix", name, 2**16)
    p = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=1, seed=5)
    p.setup()
    for t in range(3):
        tick = p.sampler.tick
        p.sample()
        first, count = p.storage.sampleable()
        want = (first + p.sampler.draws(count, p.sample_rows, tick)) % p.capacity_rows
        assert np.array_equal(p.last_indices().cpu().numpy(), want), (name, t)
        p.verify()  # and each row is the row its index names (a pass of its own, another tick)
