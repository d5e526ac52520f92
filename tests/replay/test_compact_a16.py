"""compact-a16: the compact layout with its vector fields and actions on 16-byte boundaries, so that the fused
compact kernel's plan has no vector that straddles two source runs and no misaligned load (issue 23 §2, "The
aligned layout" in docs/replay-compact-kernel.md). On the CPU: its offsets and bytes against compact, its plan,
`Storage.gather` against compact's batch field by field, the kernel's host oracles against `Storage.gather`
with terminal rows and wraparound, and the kernel probe's `layout=a16` set-up (the same transitions in the
other layout, compared field by field). On a GPU (marker `gpu`): the kernel over compact-a16 rows against
`Storage.gather`."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlperf.errors import UsageError
from rlperf.replay import layouts
from rlperf.replay.build import build_placement
from rlperf.replay.compact_merge import gather_vectors, plan_for
from rlperf.replay.compact_plan import MERGE, MIXED, NEXT, ROW, ZERO, bytes_requested, gather_bytes
from rlperf.replay.kernel_probe import other_layout
from rlperf.replay.layouts import ALIGNED_FIELDS, StorageLayout, storage_layout
from rlperf.replay.placements import PLACEMENTS
from rlperf.replay.relayout import copy_transitions, same_fields
from rlperf.replay.storage import Storage
from rlperf.workload import compose
from tests.replay.replay_steps import ENVS, step
from tests.replay.test_compact_kernel import CAP, DIMS, EVERY, STEPS, _u8

TASKS = ("motion", "walk")


def _written(layout: str, dims) -> Storage:
    """CAP rows of `layout` written through `add`, STEPS steps: the ring wraps, some rows end episodes."""
    st = Storage(storage_layout(layout, dims), CAP, kind="device", device="cpu", step_rows=ENVS)
    for t in range(STEPS):
        st.add(**step(t, dims, terminal_every=EVERY))
    return st


def _every_sampleable(st: Storage) -> torch.Tensor:
    return (torch.arange(CAP - ENVS, dtype=torch.int64) + st.ptr) % CAP  # oldest first: wrapped successors


def _padding(layout) -> np.ndarray:
    """A batch row's bytes outside every field."""
    pad = np.ones(layout.batch_row_bytes, bool)
    for f in layout.batch_fields():
        pad[f.offset: f.stop] = False
    return pad


@pytest.mark.parametrize("name", TASKS)
@pytest.mark.parametrize("mixed", ["merge", "bytes"])
def test_no_vector_of_a_motion_tracking_or_walk_row_straddles_two_runs_or_loads_misaligned(name, mixed):
    plan = plan_for(storage_layout("compact-a16", DIMS[name]), mixed)
    kinds = plan.vectors[:, 0]
    assert set(kinds) <= {ROW, NEXT, ZERO} and not np.isin(kinds, (MIXED, MERGE)).any()
    assert (plan.vectors[:, 1:3] % 16 == 0).all()  # every source and terminal offset aligned: one int4 load
    assert plan.table_blocks == 0 and plan.mixed == 0  # the kernel's shared table is empty
    # the plain compact layout has them (the contrast this layout exists for)
    old = plan_for(storage_layout("compact", DIMS[name]), mixed).vectors[:, 0]
    assert np.isin(old, (MIXED, MERGE)).any()


@pytest.mark.parametrize("name", DIMS)
def test_each_aligned_field_starts_on_16_bytes_in_every_row_and_the_rest_keeps_compacts_dtypes(name):
    a16, compact = storage_layout("compact-a16", DIMS[name]), storage_layout("compact", DIMS[name])
    for rows in ("batch_fields", "stored_fields", "terminal_fields"):
        got, old = getattr(a16, rows)(), getattr(compact, rows)()
        assert [(f.name, f.width, f.dtype) for f in got] == [(f.name, f.width, f.dtype) for f in old]
        assert all(f.offset % 16 == 0 for f in got if f.name in ALIGNED_FIELDS)
        assert all(a.stop <= b.offset for a, b in zip(got, got[1:]))  # in order, no overlap
    for rows in ("stored_row_bytes", "batch_row_bytes", "terminal_row_bytes"):
        assert getattr(a16, rows) % 16 == 0 and getattr(a16, rows) >= getattr(compact, rows)
    assert compact.field_align == 0 and a16.field_align == 16 and a16.elide_next


def test_the_bytes_it_costs_against_compact_for_motion_tracking():
    """The figures docs/replay-compact-kernel.md quotes from `rlperf replay --layouts`: 32 B more a batch row
    (1.0 MiB an iteration of 32,768 rows), 16 B more a stored row, the same terminal row."""
    dims = compose("g1_motion_tracking", "motrix").layout
    a16, compact = (storage_layout(n, dims).summary(32768) for n in ("compact-a16", "compact"))
    assert a16["batch_row_bytes"] - compact["batch_row_bytes"] == 32
    assert a16["batch_mib_per_iteration"] - compact["batch_mib_per_iteration"] == 1.0
    assert a16["stored_row_bytes"] - compact["stored_row_bytes"] == 16
    assert a16["terminal_row_bytes"] == compact["terminal_row_bytes"]
    plan = plan_for(storage_layout("compact-a16", dims), "merge")
    moved, old = bytes_requested(plan), bytes_requested(plan_for(storage_layout("compact", dims), "merge"))
    assert moved["written"] == a16["batch_row_bytes"] + 8 and moved["read"] == old["read"]


@pytest.mark.parametrize("name", DIMS)
def test_its_gather_is_compacts_batch_field_by_field_with_zero_padding(name):
    a16, compact = _written("compact-a16", DIMS[name]), _written("compact", DIMS[name])
    assert (a16.slot_of_row >= 0).any()  # some rows take their next fields from the terminal table
    idx = _every_sampleable(a16)
    got = a16.gather(idx, a16.new_batch(idx.numel()))
    want = compact.gather(idx, compact.new_batch(idx.numel()))
    assert same_fields(want, compact.layout, got, a16.layout)
    assert not _u8(got)[:, _padding(a16.layout)].any()
    for x, y in zip(a16.decode(got), compact.decode(want)):  # what a learner receives: the same tensors
        assert torch.equal(x, y)


@pytest.mark.parametrize("name", DIMS)
def test_the_kernels_host_oracles_equal_its_gather_byte_for_byte_with_terminal_rows_and_wraparound(name):
    """Both oracles (the byte plan, and either vector plan applied the kernel's way with its loads bounded like
    load16's) against `Storage.gather`: fields, and padding too, which the kernel copies from its source rows'
    padding (zero in rows written by `add`)."""
    st = _written("compact-a16", DIMS[name])
    idx = _every_sampleable(st)
    want = _u8(st.gather(idx, st.new_batch(idx.numel())))
    args = (_u8(st.table), _u8(st.terminal), st.slot_of_row.numpy(), idx.numpy())
    for mixed in ("merge", "bytes"):
        assert np.array_equal(gather_vectors(*args, step_rows=ENVS, plan=plan_for(st.layout, mixed)), want), mixed
    assert np.array_equal(gather_bytes(*args, step_rows=ENVS, plan=plan_for(st.layout, "bytes")), want)


def test_a_segment_is_run_on_only_over_padding_of_its_source_rows(monkeypatch):
    """Without critic on a boundary, next_critic's source (the stored critic) sits 2 bytes off its batch vector:
    its last vector would read past the stored row, so the plan refuses rather than copy a field or leave the row."""
    dims = DIMS["motion"]
    monkeypatch.setattr(layouts, "ALIGNED_FIELDS", ("obs", "next_obs", "actions", "next_critic"))
    with pytest.raises(ValueError, match="are not padding of its source row"):
        plan_for(storage_layout("compact-a16", dims), "merge")


def test_a_field_alignment_that_does_not_divide_the_row_alignment_is_refused():
    with pytest.raises(ValueError, match="field_align must be a multiple of 4 that divides align_bytes"):
        StorageLayout("x", DIMS["tiny"], "bfloat16", "bfloat16", "uint8", True, 16, 32)
    with pytest.raises(ValueError, match="field_align"):
        StorageLayout("x", DIMS["tiny"], "bfloat16", "bfloat16", "uint8", True, 16, 6)
    with pytest.raises(ValueError, match="field_align"):  # rows of whole words only: a row could end mid-vector
        StorageLayout("x", DIMS["tiny"], "bfloat16", "bfloat16", "uint8", True, 0, 16)


def test_same_fields_sees_a_changed_field_byte_and_non_zero_padding():
    a16, compact = _written("compact-a16", DIMS["motion"]), _written("compact", DIMS["motion"])
    idx = _every_sampleable(a16)
    got = a16.gather(idx, a16.new_batch(idx.numel()))
    want = compact.gather(idx, compact.new_batch(idx.numel()))
    assert same_fields(want, compact.layout, got, a16.layout)
    f = next(f for f in a16.layout.batch_fields() if f.name == "next_critic")
    bad = got.clone()
    bad.view(torch.uint8)[3, f.stop - 1] ^= 1
    assert not same_fields(want, compact.layout, bad, a16.layout)
    pad = int(np.flatnonzero(_padding(a16.layout))[0])
    bad = got.clone()
    bad.view(torch.uint8)[0, pad] = 7
    assert not same_fields(want, compact.layout, bad, a16.layout)
    assert not same_fields(want[:-1], compact.layout, got, a16.layout)


def test_copy_transitions_gives_the_same_batches_in_the_other_layout_terminal_rows_included():
    src = _written("compact", DIMS["motion"])
    dst = Storage(storage_layout("compact-a16", DIMS["motion"]), CAP, kind="device", device="cpu", step_rows=ENVS)
    dst.table.fill_(-1.0)  # whatever it held before: fields are overwritten, padding zeroed
    copy_transitions(src, dst)
    idx = _every_sampleable(src)
    assert bool((src.slot_of_row[idx] >= 0).any()) and dst.sampleable() == src.sampleable()
    got = dst.gather(idx, dst.new_batch(idx.numel()))
    assert same_fields(src.gather(idx, src.new_batch(idx.numel())), src.layout, got, dst.layout)
    args = (_u8(dst.table), _u8(dst.terminal), dst.slot_of_row.numpy(), idx.numpy())
    assert np.array_equal(gather_vectors(*args, step_rows=ENVS, plan=plan_for(dst.layout, "merge")), _u8(got))


def test_copy_transitions_refuses_storages_of_another_shape():
    a = Storage(storage_layout("compact", DIMS["tiny"]), CAP, step_rows=ENVS)
    b = Storage(storage_layout("compact-a16", DIMS["tiny"]), 2 * CAP, step_rows=ENVS)
    with pytest.raises(ValueError, match="differ in capacity"):
        copy_transitions(a, b)


def _cpu_compact_fused(capacity: int = 2**13):
    wl = compose("g1_motion_tracking", "motrix")
    pl = build_placement(PLACEMENTS["gpu-compact-fused"], wl, capacity, device=None, threads=1, seed=3)
    pl.setup()
    pl._setup_kernel()
    return pl


def test_the_probes_other_layout_holds_the_defaults_transitions_and_its_plan_has_no_straddling_vector():
    """What `layout=a16` launches on a GPU, set up on the CPU: a second placement over compact-a16 rows, kept on
    the first, holding its transitions (the pattern prefill, copied field by field), with the kernel's plan
    applied the kernel's way giving the default storage's batch field by field."""
    pl = _cpu_compact_fused()
    other = other_layout(pl, "a16")
    assert other is other_layout(pl, "a16")  # built once
    assert other.layout.name == "compact-a16" and other.spec.sampler == "fused" and other.spec.transfer == "none"
    assert (other.capacity_rows, other.sample_rows, other.step_rows, other.seed) == (
        pl.capacity_rows, pl.sample_rows, pl.step_rows, pl.seed)
    other._setup_kernel()  # on a GPU, setup() does this
    assert other.kernel == "sample_compact_merge" and other.plan.table_blocks == 0
    assert not np.isin(other.plan.vectors[:, 0], (MIXED, MERGE)).any()
    first, count = pl.storage.sampleable()
    assert other.storage.sampleable() == (first, count)
    idx = (first + torch.arange(0, count, 97)) % pl.capacity_rows
    want = pl.storage.gather(idx, pl.storage.new_batch(idx.numel()))
    st = other.storage
    got = gather_vectors(_u8(st.table), _u8(st.terminal), st.slot_of_row.numpy(), idx.numpy(),
                         step_rows=other.step_rows, plan=other.plan)
    assert same_fields(want, pl.layout, torch.from_numpy(got).view(torch.float32), other.layout)
    other.verify()  # row ids and successors, as the probe's placements are checked on a GPU


def test_the_probe_refuses_an_other_layout_its_kernel_has_not():
    pl = _cpu_compact_fused()
    with pytest.raises(UsageError, match="unknown other layout of gpu-compact-fused 'a32'; valid: a16"):
        other_layout(pl, "a32")
    fp32 = build_placement(PLACEMENTS["gpu-fused"], compose("g1_motion_tracking", "motrix"), 2**12, device=None,
                           threads=1, seed=3)
    fp32.setup()
    fp32._setup_kernel()
    with pytest.raises(UsageError, match="unknown other layout of gpu-fused 'a16'; valid: $"):
        other_layout(fp32, "a16")


def test_the_probes_name_for_the_kernel_over_compact_a16_is_the_merge_kernels_code():
    """So its A/B row and ncu column differ from the default's by the layout alone."""
    from rlperf.replay.kernel_probe import OTHER_LAYOUTS
    from rlperf.replay.placements.cupy_kernels import COMPACT_KERNELS, _SOURCE

    value, layout, name = OTHER_LAYOUTS[COMPACT_KERNELS["merge"]]
    assert (value, layout) == ("a16", "compact-a16") and layout in layouts.LAYOUTS
    body = "(COMPACT_ARGS) { compact_rows<true>(COMPACT_PASS); }"
    assert f"void {COMPACT_KERNELS['merge']}{body}" in _SOURCE and f"void {name}{body}" in _SOURCE


def test_the_ab_times_the_other_layouts_launches_on_that_placements_stream(monkeypatch):
    """CUDA events on the default placement's stream would not see launches queued on the other's."""
    from rlperf.measure import timing
    from rlperf.replay import kernel_probe

    pl = _cpu_compact_fused()
    other = other_layout(pl, "a16")
    pl.stream, other.stream = "default stream", "other stream"
    timed = []
    monkeypatch.setattr(timing, "time_cuda", lambda fn, *, stream, **_: timed.append(stream) or [1.0])
    monkeypatch.setattr(kernel_probe, "launcher", lambda p, v, tick=None: None)
    monkeypatch.setattr(kernel_probe, "same_output", lambda p, v: True)
    monkeypatch.setattr("rlperf.replay.placements.cupy_kernels.registers", lambda name: 0)  # compiles: CuPy, a GPU
    rows = kernel_probe.ab_timings(pl, "gpu-compact-fused", rounds=1)
    streams = dict(zip((r["variant"] for r in rows), timed))
    assert streams.pop("gpu-compact-fused threads=256 layout=a16") == "other stream"
    assert set(streams.values()) == {"default stream"}
    a16 = next(r for r in rows if r["layout"] == "a16")
    assert a16["compared"] == "fields" and a16["kernel"] == "sample_compact_a16" and a16["checked"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", TASKS)
def test_the_fused_kernel_over_compact_a16_rows_equals_the_unfused_gather_on_a_gpu(name):
    """storage=device-compact-a16, the fused sampler: the placement's own launch (sample_compact_merge with a plan
    of aligned whole-run vectors only) and the probe's name for it (sample_compact_a16), against `Storage.gather`
    for the same draw, with terminal rows among the drawn."""
    from rlperf.replay.placements.cupy_kernels import launch
    from rlperf.replay.placements.specs import combination
    from rlperf.replay.sampler import CounterSampler

    dev = torch.device("cuda", 0)
    spec = combination(storage="device-compact-a16", sampler="fused", transfer="none")
    p = spec.load()(spec=spec, layout=DIMS[name], capacity_rows=CAP, sample_rows=777, device=dev, threads=1,
                    seed=5, step_rows=ENVS, prefill=False)
    p.setup()
    for t in range(STEPS):
        p.storage.add(**step(t, DIMS[name], terminal_every=EVERY))
    torch.cuda.synchronize(dev)
    assert p.kernel == "sample_compact_merge" and p.plan.table_blocks == 0
    first, count = p.storage.sampleable()
    for kernel in ("sample_compact_merge", "sample_compact_a16"):
        tick = p.sampler.tick
        want_idx = (first + CounterSampler(p.sampler.seed).draws(count, 777, tick)) % CAP
        p.out.fill_(-1.0)
        torch.cuda.synchronize(dev)
        if kernel == p.kernel:
            rows = p.sample()
            assert rows.shape == (777, p.layout.width)
        else:
            launch(kernel, p.stream, p.sample_rows, *p.kernel_args(p.sampler.next_tick()))
        torch.cuda.synchronize(dev)
        assert torch.equal(p.last_indices().cpu(), torch.from_numpy(want_idx)), kernel
        assert bool((p.storage.slot_of_row[p.last_indices()] >= 0).any())  # terminal rows among the drawn
        want = p.storage.gather(p.last_indices(), p.storage.new_batch(777))
        assert torch.equal(p.out, want), kernel  # padding too: zero in rows written by add
