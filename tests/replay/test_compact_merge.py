"""The `merge` plan of the compact kernel (its straddling vectors from whole 16-byte loads and byte masks), the
plan gpu-compact-fused launches: the plan's shape, its refusals, that it fits the kernel's shared memory for every
layout the placement is given, and on the CPU the kernel's way of applying a plan (`gather_vectors`, vector by
vector, loads bounded like `load16`) against the unfused `Storage.gather`, for both plans. The CUDA kernel
`sample_compact_merge` is checked on a GPU in test_compact_kernel.py and test_kernel_probe.py (marker `gpu`)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import torch

from rlperf.errors import UsageError
from rlperf.replay.compact_merge import ENTRY, MIXED_CHOICES, gather_vectors, merge_entry, plan_for, reach
from rlperf.replay.compact_plan import MERGE, MIXED, ROW, ZERO, bytes_requested, compact_plan, gather_bytes
from rlperf.replay.layouts import storage_layout
from rlperf.replay.placements import PLACEMENTS
from rlperf.replay.placements import cupy_kernels
from rlperf.replay.placements.gpu import COMPACT_MIXED
from rlperf.workload import available_tasks, compose
from tests.replay.replay_steps import ENVS, TINY
from tests.replay.test_compact_kernel import CAP, DIMS, _assert_fields_equal, _u8, _written


@pytest.mark.parametrize("mixed", ["bytes", "merge"])
@pytest.mark.parametrize("name", DIMS)
def test_either_plan_applied_vector_by_vector_equals_the_unfused_gather(name, mixed):
    st = _written(DIMS[name])
    assert (st.slot_of_row >= 0).any()  # some rows take their next fields from the terminal table
    idx = (torch.arange(CAP - ENVS, dtype=torch.int64) + st.ptr) % CAP  # oldest first: wrapped successors
    want = _u8(st.gather(idx, st.new_batch(idx.numel())))
    got = gather_vectors(_u8(st.table), _u8(st.terminal), st.slot_of_row.numpy(), idx.numpy(), step_rows=ENVS,
                         plan=plan_for(st.layout, mixed))
    _assert_fields_equal(got, want, st.layout)


def test_a_motion_tracking_row_has_no_byte_by_byte_vector_left_and_reads_two_windows_more():
    layout = storage_layout("compact", DIMS["motion"])
    default, merged = plan_for(layout, "bytes"), plan_for(layout, "merge")
    kinds = merged.vectors[:, 0]
    assert (kinds == MIXED).sum() == 0 and (kinds == MERGE).sum() == (default.vectors[:, 0] == MIXED).sum() == 2
    assert np.array_equal(merged.vectors[kinds != MERGE], default.vectors[kinds != MERGE])  # only those change
    assert merged.table_blocks == 1 and default.table_blocks == default.mixed == 2
    before, after = bytes_requested(default)["read"], bytes_requested(merged)["read"]
    assert before < after <= before + 2 * 2 * 32  # whole windows instead of single bytes, two runs a vector


@pytest.mark.parametrize("name", DIMS)
def test_every_merge_entry_has_disjoint_masks_that_cover_exactly_the_vectors_field_bytes(name):
    plan = plan_for(storage_layout("compact", DIMS[name]), "merge")
    for v in np.flatnonzero(plan.vectors[:, 0] == MERGE):
        a, b, ma, mb = plan.mixed_bytes[plan.vectors[v, 1]: plan.vectors[v, 1] + ENTRY]
        masks = np.stack([ma, mb]).view(np.uint32).astype("<u4").view(np.uint8).reshape(2, 16)
        assert not (masks[0] & masks[1]).any()
        live = plan.bytes_[16 * v: 16 * v + 16, 0] != ZERO
        assert np.array_equal((masks[0] | masks[1]) == 0xFF, live)
        assert a[0] != ZERO and (b[0] != ZERO or not masks[1].any())


def test_a_vector_of_three_runs_or_a_window_outside_its_row_stays_byte_by_byte():
    plan = compact_plan(storage_layout("compact", DIMS["tiny"]))
    mixed = np.flatnonzero(plan.vectors[:, 0] == MIXED)
    entries = [merge_entry(plan.bytes_[16 * v: 16 * v + 16], plan) for v in mixed]
    assert entries[0] is None  # next_obs's first byte at vector byte 10: its window would start at -10
    assert entries[1] is None  # next_obs, obs, then the reward at another shift: three runs
    assert any(e is not None for e in entries)
    merged = plan_for(storage_layout("compact", DIMS["tiny"]), "merge")
    assert (merged.vectors[:, 0] == MIXED).sum() == sum(e is None for e in entries)
    left = merged.vectors[merged.vectors[:, 0] == MIXED, 1]
    assert list(left) == list(range(left.size))  # the byte plans left come first in the shared table


def test_load16_reach_and_the_oracle_refuse_a_load_that_leaves_its_row():
    assert reach(0, 32) and reach(16, 32) and reach(6, 32) and not reach(22, 32) and not reach(-2, 32)
    assert not reach(24, 32)  # misaligned: the second aligned int4 would start at 32
    layout = storage_layout("compact", DIMS["motion"])
    plan = plan_for(layout, "bytes")
    vectors = plan.vectors.copy()
    v = int(np.flatnonzero(vectors[:, 0] == ROW)[0])
    vectors[v, 1] = layout.stored_row_bytes - 8
    bad = dataclasses.replace(plan, vectors=vectors)
    table = np.zeros((4, layout.stored_row_bytes), np.uint8)
    with pytest.raises(IndexError, match="leaves a 976 B row"):
        gather_vectors(table, np.zeros((1, layout.terminal_row_bytes), np.uint8), np.full(4, -1), np.arange(1),
                       step_rows=1, plan=bad)


def test_an_unknown_mixed_path_is_refused_naming_the_valid_ones():
    with pytest.raises(UsageError, match="valid: bytes, merge"):
        plan_for(storage_layout("compact", DIMS["motion"]), "words")


@pytest.mark.parametrize("name", DIMS)
def test_the_merge_plan_writes_the_default_plans_row_byte_for_byte_padding_included(name):
    """What the GPU A/B checks (`same_output` compares whole rows): here on the host, for every byte."""
    st = _written(DIMS[name])
    idx = ((torch.arange(CAP - ENVS, dtype=torch.int64) + st.ptr) % CAP).numpy()
    args = (_u8(st.table), _u8(st.terminal), st.slot_of_row.numpy(), idx)
    default = gather_bytes(*args, step_rows=ENVS, plan=plan_for(st.layout, "bytes"))
    assert np.array_equal(gather_vectors(*args, step_rows=ENVS, plan=plan_for(st.layout, "merge")), default)
    assert np.array_equal(gather_vectors(*args, step_rows=ENVS, plan=plan_for(st.layout, "bytes")), default)


def _layouts() -> dict:
    """The test layout and every packaged task/sim's: the layouts gpu-compact-fused is built for."""
    out = {"tiny": TINY}
    for task, sims in available_tasks().items():
        out.update({f"{task}/{sim}": compose(task, sim).layout for sim in sims})
    return out


def _compact_fused(dims):
    """gpu-compact-fused on the CPU, its kernel set up as on a GPU (plan, shared table, kernel name)."""
    spec = PLACEMENTS["gpu-compact-fused"]
    pl = spec.load()(spec=spec, layout=dims, capacity_rows=CAP, sample_rows=16, device=None, threads=1, seed=2,
                     step_rows=ENVS, prefill=False)
    pl.setup()
    pl._setup_kernel()
    return pl


def test_the_shared_memory_limits_are_the_kernels_own():
    """The placement checks plans against Python copies of the kernel's #defines; they must be the same."""
    defines = dict(re.findall(r"#define (COMPACT_MAX_\w+) (\d+)", cupy_kernels._SOURCE))
    assert defines == {"COMPACT_MAX_VECS": str(cupy_kernels.COMPACT_MAX_VECS),
                       "COMPACT_MAX_MIXED": str(cupy_kernels.COMPACT_MAX_MIXED)}
    assert 'void sample_compact_merge(' in cupy_kernels._SOURCE and 'void sample_compact(' in cupy_kernels._SOURCE
    assert set(cupy_kernels.COMPACT_KERNELS) == set(MIXED_CHOICES)


@pytest.mark.parametrize("name", list(_layouts()))
def test_the_placement_launches_the_merge_plan_and_it_fits_the_kernels_shared_memory(name):
    dims = _layouts()[name]
    pl = _compact_fused(dims)
    want = plan_for(storage_layout("compact", dims), COMPACT_MIXED)
    assert COMPACT_MIXED == "merge" and pl.kernel == "sample_compact_merge"
    assert np.array_equal(pl.vplan.numpy(), want.vectors) and np.array_equal(pl.bplan.numpy(), want.mixed_bytes)
    assert (want.vectors[:, 0] == MERGE).any()  # every layout here has a straddling vector the merge path takes
    assert want.vectors.shape[0] <= cupy_kernels.COMPACT_MAX_VECS
    assert want.table_blocks <= cupy_kernels.COMPACT_MAX_MIXED and len(want.mixed_bytes) % 16 == 0
    entries = want.vectors[want.vectors[:, 0] == MERGE, 1]
    assert (entries + ENTRY <= 16 * want.table_blocks).all()  # every entry inside the table the kernel copies
    left = want.vectors[want.vectors[:, 0] == MIXED, 1]
    assert (16 * (left + 1) <= 16 * want.table_blocks).all()  # and every byte plan left byte by byte


def test_the_bytes_counted_are_those_of_the_plan_launched():
    dims = compose("g1_motion_tracking", "motrix").layout
    pl = _compact_fused(dims)
    layout = storage_layout("compact", dims)
    per_row = bytes_requested(plan_for(layout, "merge"))
    assert per_row != bytes_requested(plan_for(layout, "bytes"))  # the two plans read different windows
    assert pl.bytes_per_sample()["device_moved"] == 16 * (per_row["read"] + per_row["written"])


def test_a_plan_over_the_kernels_shared_table_is_refused_at_set_up(monkeypatch):
    """The check reads the plan launched: the tiny layout's merge plan needs 4 blocks, so a 3-block kernel
    refuses it, naming both counts."""
    assert plan_for(storage_layout("compact", TINY), "merge").table_blocks == 4
    monkeypatch.setattr(cupy_kernels, "COMPACT_MAX_MIXED", 3)
    with pytest.raises(NotImplementedError, match="at most 256 vectors a row and 3 blocks .* has 4 and 4"):
        _compact_fused(TINY)
