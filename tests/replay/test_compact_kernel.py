"""The fused gather for elided (compact) layouts: its plan, its host oracle against the unfused
`Storage.gather`, and (on a GPU) the CUDA kernels against the same unfused path: `sample_compact_merge` with
the merge plan (what gpu-compact-fused launches) and `sample_compact` with the bytes plan (the probe's
alternative).

The kernel is CUDA C compiled by NVRTC through CuPy, which has no interpreter mode, so its own parity
test carries the `gpu` marker; the plan it follows and the bytes it moves are checked here on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlperf.replay.compact_plan import MIXED, NEXT, ROW, ZERO, bytes_requested, compact_plan, gather_bytes
from rlperf.replay.layouts import storage_layout
from rlperf.replay.storage import Storage
from rlperf.workload import compose
from tests.replay.replay_steps import ENVS, TINY, step

CAP, STEPS, EVERY = 64, 20, 8  # 80 rows into 64: the ring wraps; terminal rows within the 2 terminal slots
DIMS = {"tiny": TINY, "motion": compose("g1_motion_tracking", "motrix").layout,
        "walk": compose("g1_walk_flat", "mujoco").layout}


def _written(dims, device="cpu") -> Storage:
    st = Storage(storage_layout("compact", dims), CAP, kind="device", device=device, step_rows=ENVS)
    for t in range(STEPS):
        st.add(**step(t, dims, terminal_every=EVERY))
    return st


def _u8(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().contiguous().view(torch.uint8).numpy()


def _assert_fields_equal(got: np.ndarray, want: np.ndarray, layout) -> None:
    """Every batch field byte for byte (padding between fields is no part of a batch)."""
    for f in layout.batch_fields():
        assert np.array_equal(got[:, f.offset: f.stop], want[:, f.offset: f.stop]), f.name


@pytest.mark.parametrize("name", DIMS)
def test_the_vector_plan_is_the_byte_plan_read_sixteen_bytes_at_a_time(name):
    layout = storage_layout("compact", DIMS[name])
    plan = compact_plan(layout)
    assert plan.vectors.shape == (layout.batch_row_bytes // 16, 4)
    steps = np.arange(16)
    for v, (kind, off, toff, _) in enumerate(plan.vectors):
        b = plan.bytes_[16 * v: 16 * v + 16]
        if kind == MIXED:  # `off` is its ordinal among the mixed vectors, whose byte plans the kernel holds
            assert len(set(b[:, 0])) > 1 or (b[:, 1] != b[0, 1] + steps).any()
            assert np.array_equal(plan.mixed_bytes[16 * off: 16 * off + 16], b)
            continue
        assert (b[:, 0] == kind).all()
        if kind in (ROW, NEXT):
            assert (b[:, 1] == off + steps).all()
        if kind == NEXT:
            assert (b[:, 2] == toff + steps).all()
    last = max(f.stop for f in layout.batch_fields())
    assert (plan.bytes_[last:, 0] == ZERO).all()  # the row's tail padding is written as zeros


def test_a_motion_tracking_row_is_two_byte_by_byte_vectors_and_moves_its_payload_once():
    layout = storage_layout("compact", DIMS["motion"])
    plan = compact_plan(layout)
    assert (plan.vectors[:, 0] == MIXED).sum() == 2  # critic|next_critic and next_critic|padding
    moved = bytes_requested(plan)
    payload = layout.batch_row_bytes  # 1,872 B: 58.5 MiB for 32,768 rows
    assert payload == 1872 and 32768 * payload == 58.5 * 2**20
    assert payload - 10 <= moved["read"] - 4 <= payload  # every field byte read once (slot index aside)
    assert moved["written"] == payload + 8  # the batch row and its drawn index


@pytest.mark.parametrize("name", DIMS)
def test_the_plan_applied_on_the_host_equals_the_unfused_gather(name):
    st = _written(DIMS[name])
    assert (st.slot_of_row >= 0).any()  # some sampled rows take their next obs from the terminal table
    idx = torch.arange(CAP - ENVS, dtype=torch.int64)  # every sampleable row (the newest step excluded)
    idx = (idx + st.ptr) % CAP  # oldest first, so wrapped successors are exercised
    want = _u8(st.gather(idx, st.new_batch(idx.numel())))
    got = gather_bytes(_u8(st.table), _u8(st.terminal), st.slot_of_row.numpy(), idx.numpy(), step_rows=ENVS,
                       plan=compact_plan(st.layout))
    _assert_fields_equal(got, want, st.layout)


@pytest.mark.gpu
@pytest.mark.parametrize("mixed", ["bytes", "merge"])
@pytest.mark.parametrize("name", DIMS)
def test_the_fused_compact_kernel_equals_the_unfused_gather_on_a_gpu(name, mixed):
    """`merge` (COMPACT_MIXED): the placement's own kernel, sampled as a learner samples it; `bytes`:
    sample_compact with the bytes plan, launched as the kernel probe's A/B launches it, for the same draw."""
    from rlperf.replay.kernel_probe import Variant, launcher
    from rlperf.replay.placements import PLACEMENTS
    from rlperf.replay.placements.gpu import COMPACT_MIXED
    from rlperf.replay.sampler import CounterSampler

    dev = torch.device("cuda", 0)
    spec = PLACEMENTS["gpu-compact-fused"]
    p = spec.load()(spec=spec, layout=DIMS[name], capacity_rows=CAP, sample_rows=777, device=dev, threads=1,
                    seed=5, step_rows=ENVS, prefill=False)
    p.setup()
    for t in range(STEPS):
        p.storage.add(**step(t, DIMS[name], terminal_every=EVERY))
    first, count = p.storage.sampleable()
    want_idx = (first + CounterSampler(p.sampler.seed).draws(count, 777, p.sampler.tick)) % CAP
    if mixed == COMPACT_MIXED:
        rows = p.sample()
    else:
        launcher(p, Variant("gpu-compact-fused", mixed=mixed))()
        rows = p.out[:, : p.layout.width]
    torch.cuda.synchronize(dev)
    assert torch.equal(p.last_indices().cpu(), torch.from_numpy(want_idx))
    assert bool((p.storage.slot_of_row[p.last_indices()] >= 0).any())  # terminal rows among the drawn
    want = _u8(p.storage.gather(p.last_indices(), p.storage.new_batch(777)))
    _assert_fields_equal(_u8(p.out), want, p.layout)
    assert rows.shape == (777, p.layout.width)


def test_the_report_shows_the_bytes_the_fused_compact_kernel_moves_against_its_payload():
    from rlperf.replay.build import build_placement
    from rlperf.replay.metrics import GPU_SAMPLE
    from rlperf.replay.placements import PLACEMENTS
    from rlperf.replay.records import bytes_moved, kernel_bytes, timing_entry
    from rlperf.report.replay_markdown import analysis_lines

    wl = compose("g1_motion_tracking", "motrix")
    fused = build_placement(PLACEMENTS["gpu-compact-fused"], wl, 2**12, device=None, threads=1, seed=1)
    unfused = build_placement(PLACEMENTS["gpu-compact"], wl, 2**12, device=None, threads=1, seed=1)
    for p in (fused, unfused):
        p.setup()
    per_sample = fused.bytes_per_sample()
    # the merge plan it launches: 1,908 B read (whole windows for the two straddling vectors), 1,880 B written
    assert per_sample["device_moved"] == 32768 * (1908 + 1880)
    assert kernel_bytes(GPU_SAMPLE, unfused.bytes_per_sample()) is None  # no kernel of its own to count
    entry = timing_entry([0.04, 0.05], GPU_SAMPLE, bytes_moved(GPU_SAMPLE, per_sample), warmup=0, repeat=2,
                         ceilings={}, clock="cuda_events", kernel=kernel_bytes(GPU_SAMPLE, per_sample))
    assert entry["bytes_moved"] == 2 * 32768 * 1872 and entry["kernel_x_payload"] == pytest.approx(3788 / 3744)
    doc = {"command": "rlperf replay", "device_info": "test", "args": {"task": "t", "sim": "s", "warmup": 0,
           "repeat": 2, "torch_threads": 1}, "workload": {"sample_rows_per_rank": 32768, "sample_bytes_per_rank": 1,
           "row_floats": 930, "row_bytes": 3720, "collector_rows_per_iteration": 2048, "sample_new_ratio_per_rank": 16},
           "skipped": [], "results": [{"placement": "gpu-compact-fused", "world_size": 1, "capacity_rows": 2**12,
                                       "timings": {GPU_SAMPLE: entry}}]}
    assert "| gpu-compact-fused | 4,096 | 118.38 | 117.00 | 1.0118 |" in [" ".join(line.split())
                                                                        for line in analysis_lines(doc)]
