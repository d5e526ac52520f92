"""The kernel probe that Nsight Compute and the CUDA-event A/B drive (scripts/device/compact_ncu.sh): its
variants, the kernel arguments it relaunches a draw with, and its driver's bad input; on a GPU, that every
launch variant it calls checked writes the default launch's batch byte for byte."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from rlperf.errors import UsageError
from rlperf.replay.build import build_placement
from rlperf.replay.compact_merge import plan_for
from rlperf.replay.compact_plan import MERGE, MIXED, NEXT, ROW, ZERO
from rlperf.replay.kernel_probe import (ALTERNATIVES, HINTED, HINTS, OTHER_LAYOUTS, PARTS, PLACEMENTS, UNROLLS,
                                        Variant,
                                        check_placements, diagnostic_plan, kernel_of, launcher, variants)
from rlperf.replay.layouts import storage_layout
from rlperf.replay.placements import PLACEMENTS as SPECS
from rlperf.replay.placements.cupy_kernels import ROW_SPLITS, THREADS, launch
from rlperf.workload import compose

ROOT = Path(__file__).resolve().parents[2]
WL = compose("g1_motion_tracking", "motrix")


def _cpu_placement(name: str):
    """The placement on the CPU with its kernel's setup done (plan, vector width), as on a GPU."""
    pl = build_placement(SPECS[name], WL, 2**13, device=None, threads=1, seed=3)
    pl.setup()
    pl._setup_kernel()
    return pl


def test_variants_start_with_the_default_launch_and_change_one_factor_each():
    vs = variants("gpu-compact-fused", elided=True, kernel="sample_compact_merge")
    assert vs[0] == Variant("gpu-compact-fused") and vs[0].threads == THREADS and vs[0].step_rows is None
    assert len({v.label for v in vs}) == len(vs)
    for v in vs[1:]:
        changed = (v.threads != THREADS, v.step_rows is not None, v.plan is not None, v.mixed is not None,
                   v.vec is not None, v.layout is not None, v.hint is not None, v.parts is not None,
                   v.unroll is not None)
        assert sum(changed) == 1, v.label
    diagnostics = [v for v in vs if v.step_rows is not None or v.plan is not None]
    assert len(diagnostics) == 4 and not any(v.checked for v in diagnostics)  # other bytes: not the same batch
    assert vs[1] == Variant("gpu-compact-fused", mixed="bytes") and vs[1].checked  # the alternative: same batch
    assert vs[1].compared == "bytes" and all(v.compared == "bytes" for v in vs if v.layout is None)
    # the other layout right after it: checked, field by field (its batch differs by padding)
    assert vs[2] == Variant("gpu-compact-fused", layout="a16") and vs[2].checked and vs[2].compared == "fields"
    assert [v.layout for v in vs].count("a16") == 1
    assert all(v.checked for v in variants("gpu-fused-bf16", elided=False, kernel="sample_int4"))
    fp32 = variants("gpu-fused", elided=False, kernel="sample_float2")
    assert fp32[1] == Variant("gpu-fused", vec="int4") and fp32[1].checked
    assert not any(v.vec or v.mixed or v.layout for v in variants("gpu-fused-bf16", elided=False, kernel="sample_int4"))
    assert not any(v.layout for v in fp32)
    # the whole-row kernels get every cache hint, each a checked variant of its own; the compact kernel none
    for name, kernel, vs in (("gpu-fused", "sample_float2", fp32),
                             ("gpu-fused-bf16", "sample_int4", variants("gpu-fused-bf16", elided=False,
                                                                        kernel="sample_int4"))):
        hinted = [v for v in vs if v.hint]
        assert [v.hint for v in hinted] == list(HINTS) and all(v.checked for v in hinted)
        assert vs.index(hinted[0]) < min(i for i, v in enumerate(vs) if v.threads != THREADS)  # before threads
        split = [v for v in vs if v.parts]  # and every split but the placement's own, checked, before the hints
        assert [v.parts for v in split] == [p for p in PARTS if p != ROW_SPLITS[kernel]]
        assert all(v.checked for v in split)
        assert vs.index(split[-1]) < vs.index(hinted[0])
        assert [v.unroll for v in vs if v.unroll] == list(UNROLLS)
    compact = variants("gpu-compact-fused", elided=True, kernel="sample_compact_merge")
    assert not any(v.hint or v.parts or v.unroll for v in compact)


def test_a_cache_hint_launches_the_kernel_the_source_defines_under_its_suffix():
    from rlperf.replay.placements.cupy_kernels import _SOURCE

    suffixes = set(re.findall(r"SAMPLE_KERNEL\(BASE##(\w+),", _SOURCE))
    assert suffixes == set(HINTS.values()) | {f"_p{p}" for p in PARTS if p > 1} | set(UNROLLS.values())
    assert set(re.findall(r"^SAMPLE_KERNELS\((\w+),", _SOURCE, re.M)) == set(HINTED)
    assert kernel_of("sample_float2", Variant("gpu-fused", hint="cs")) == "sample_float2_cs"
    assert kernel_of("sample_int4", Variant("gpu-fused-bf16", hint="l2pf-st-cs")) == "sample_int4_l2pf_stcs"
    for kernel, v in (("sample_compact_merge", Variant("gpu-compact-fused", hint="cs")),  # not a whole-row kernel
                      ("sample_float2", Variant("gpu-fused", hint="nt")),  # no such hint
                      ("sample_float2", Variant("gpu-fused", hint="cs", vec="int4"))):  # two options at once
        with pytest.raises(ValueError):
            kernel_of(kernel, v)


def test_a_split_launches_its_build_with_that_many_warps_a_row_and_only_for_a_whole_row_kernel(monkeypatch):
    from rlperf.replay.placements.cupy_kernels import _SOURCE

    for p in PARTS[1:]:  # each split is built from the source with its P, a P-th of the vectors a lane
        assert re.search(rf"SAMPLE_KERNEL\(BASE##_p{p}, V, U / {p}, 0, 0, {p}\)", _SOURCE)
    assert re.search(r"SAMPLE_KERNEL\(BASE##_uhalf, V, U / 2, 0, 0, 1\)", _SOURCE)  # half of them, unsplit
    assert kernel_of("sample_float2", Variant("gpu-fused", unroll="half")) == "sample_float2_uhalf"
    assert kernel_of("sample_float2", Variant("gpu-fused", parts=4)) == "sample_float2_p4"
    assert kernel_of("sample_int4", Variant("gpu-fused-bf16", parts=2)) == "sample_int4_p2"
    # the default launch is the placement's own split (fp32 over 4 warps), parts=1 the whole row
    assert kernel_of("sample_float2", Variant("gpu-fused")) == "sample_float2_p4"
    assert kernel_of("sample_float2", Variant("gpu-fused", parts=1)) == "sample_float2"
    assert kernel_of("sample_int4", Variant("gpu-fused-bf16")) == "sample_int4"
    for kernel, v in (("sample_compact_merge", Variant("gpu-compact-fused", parts=2)),  # not a whole-row kernel
                      ("sample_float2", Variant("gpu-fused", parts=3)),  # not a built split
                      ("sample_float2", Variant("gpu-fused", parts=2, hint="cs")),  # two options at once
                      ("sample_float2", Variant("gpu-fused", parts=2, unroll="half")),
                      ("sample_compact_merge", Variant("gpu-compact-fused", unroll="half"))):
        with pytest.raises(ValueError, match="no such (hint|parts|unroll)"):
            kernel_of(kernel, v)
    launched = []  # the probe launches the batch's rows; the launch sizes the grid by the build's warps a row
    monkeypatch.setattr("rlperf.replay.placements.cupy_kernels.launch",
                        lambda name, stream, rows, *args, threads: launched.append((name, rows, args[3])))
    pl = _cpu_placement("gpu-fused")
    assert pl.launched == "sample_float2_p4"  # what the placement itself launches: the probe's default
    for v in (Variant("gpu-fused"), Variant("gpu-fused", parts=1)):
        launcher(pl, v, tick=7)()
    assert launched == [("sample_float2_p4", pl.sample_rows, pl.sample_rows),
                        ("sample_float2", pl.sample_rows, pl.sample_rows)]  # the kernel's rows stay the batch's


def test_a_launch_has_as_many_warps_as_rows_times_its_builds_warps_a_row(monkeypatch):
    from rlperf.replay.placements import cupy_kernels

    grids = []
    monkeypatch.setattr(cupy_kernels, "cupy_stream", lambda stream: contextlib.nullcontext())
    monkeypatch.setattr(cupy_kernels, "kernel", lambda name: lambda grid, block, args: grids.append((grid, block)))
    assert [cupy_kernels.warps_a_row(n) for n in ("sample_float2", "sample_float2_p4", "sample_int4_p2",
                                                  "sample_compact_merge", "sample_float2_uhalf")] == [1, 4, 2, 1, 1]
    for name in ("sample_float2", "sample_float2_p4", "sample_int4_p2"):
        cupy_kernels.launch(name, None, 1000)
    assert grids == [((125,), (256,)), ((500,), (256,)), ((250,), (256,))]  # 8 warps a block


def test_a_variant_launches_its_kernels_alternative_and_only_that_kernels():
    merge = "sample_compact_merge"  # gpu-compact-fused's kernel; its alternative is the byte-by-byte one
    assert kernel_of(merge, Variant("gpu-compact-fused")) == merge
    assert kernel_of(merge, Variant("gpu-compact-fused", plan="aligned")) == merge
    assert kernel_of(merge, Variant("gpu-compact-fused", mixed="bytes")) == "sample_compact"
    assert kernel_of("sample_float2", Variant("gpu-fused", vec="int4")) == "sample_float2_wide"
    assert kernel_of(merge, Variant("gpu-compact-fused", layout="a16")) == "sample_compact_a16"  # same code, own name
    for kernel, v in (("sample_int4", Variant("gpu-fused-bf16", vec="int4")),
                      ("sample_float2", Variant("gpu-fused", mixed="bytes")),
                      (merge, Variant("gpu-compact-fused", mixed="merge")),  # the default is no alternative
                      ("sample_compact", Variant("gpu-compact-fused", mixed="bytes")),  # nor has one itself
                      (merge, Variant("gpu-compact-fused", mixed="bytes", vec="int4"))):
        with pytest.raises(ValueError, match="no such alternative"):
            kernel_of(kernel, v)
    for kernel, v in (("sample_float2", Variant("gpu-fused", layout="a16")),
                      (merge, Variant("gpu-compact-fused", layout="a32"))):
        with pytest.raises(ValueError, match="no such layout"):
            kernel_of(kernel, v)


@pytest.mark.parametrize("mixed", ["merge", "bytes"])  # the placement's plan, and the alternative's
def test_the_diagnostic_plans_take_out_one_path_and_keep_every_load_in_its_row(mixed):
    layout = storage_layout("compact", WL.layout)
    plan = plan_for(layout, mixed)
    kinds = plan.vectors[:, 0]
    straddling = np.isin(kinds, (MIXED, MERGE))
    misaligned = np.isin(kinds, (ROW, NEXT)) & (plan.vectors[:, 1] % 16 != 0)
    assert misaligned.any() and straddling.sum() == 2  # both paths exist in a motion-tracking row
    assert (kinds == (MERGE if mixed == "merge" else MIXED)).sum() == 2
    no_mixed = diagnostic_plan(plan.vectors, "no-mixed")
    assert (no_mixed[straddling, 0] == ZERO).all() and np.array_equal(no_mixed[~straddling],
                                                                      plan.vectors[~straddling])
    aligned = diagnostic_plan(plan.vectors, "aligned")
    assert (aligned[np.isin(kinds, (ROW, NEXT)), 1:3] % 16 == 0).all()
    assert (aligned[misaligned, 1] < plan.vectors[misaligned, 1]).all()
    assert (0 <= aligned[:, 1]).all() and (aligned[kinds == ROW, 1] + 16 <= layout.stored_row_bytes).all()
    assert np.array_equal(aligned[straddling], plan.vectors[straddling])
    with pytest.raises(UsageError, match="no-mixed, aligned"):
        diagnostic_plan(plan.vectors, "nope")


def test_an_unknown_placement_is_refused_naming_the_ones_the_probe_knows():
    assert check_placements(["gpu-fused"]) == ["gpu-fused"]
    with pytest.raises(UsageError, match="gpu-fused-bf16, gpu-compact-fused, gpu-fused"):
        check_placements(["gpu-fused", "gpu"])


def test_the_compact_kernel_arguments_move_only_the_successor_when_asked():
    pl = _cpu_placement("gpu-compact-fused")
    args = pl.kernel_args(7)
    assert len(args) == 18 and int(args[-1]) == 7  # the draw's tick is the last argument
    assert int(args[8]) == pl.layout.batch_row_bytes // 16  # the batch row in 16-byte vectors
    assert int(args[12]) == pl.step_rows == WL.num_envs  # the successor is one collector step on
    moved = pl.kernel_args(7, step_rows=1)
    assert int(moved[12]) == 1
    assert [int(a) for i, a in enumerate(moved) if i != 12] == [int(a) for i, a in enumerate(args) if i != 12]
    other = torch.zeros_like(pl.vplan)
    replanned = pl.kernel_args(7, vplan=other)
    assert int(args[5]) == pl.vplan.data_ptr() and int(replanned[5]) == other.data_ptr()
    assert [int(a) for i, a in enumerate(replanned) if i != 5] == [int(a) for i, a in enumerate(args) if i != 5]
    assert pl.plan.mixed == 0 and int(args[9]) == pl.plan.table_blocks == 1  # the merge plan: two entries, one block
    table = torch.zeros((32, 4), dtype=torch.int32)
    retabled = pl.kernel_args(7, vplan=other, table=table)
    assert int(retabled[6]) == table.data_ptr() and int(retabled[9]) == 2  # its pointer and its blocks of 16
    assert [int(a) for i, a in enumerate(retabled) if i not in (6, 9)] == [int(a) for i, a in enumerate(replanned)
                                                                            if i not in (6, 9)]


def test_a_whole_row_kernel_takes_its_row_in_vectors_and_has_no_successor_to_move():
    pl = _cpu_placement("gpu-fused")
    args = pl.kernel_args(2)
    assert pl.kernel == "sample_float2" and int(args[4]) == pl.layout.stored_row_bytes // 8  # 3,720 B: 8-byte vectors
    assert int(args[-1]) == 2 and len(args) == 10
    for diagnostic in ({"step_rows": 1}, {"vplan": torch.zeros(1)}, {"table": torch.zeros(16, 4)}):
        with pytest.raises(ValueError, match="not elided"):
            pl.kernel_args(2, **diagnostic)


@pytest.mark.parametrize("threads", [0, 48, 2048])
def test_a_block_that_is_not_whole_warps_is_refused_before_any_launch(threads):
    with pytest.raises(ValueError, match="multiple of 32 in 32..1024"):
        launch("sample_int4", None, 32, threads=threads)


def test_the_device_script_labels_each_kernel_as_the_probe_labels_its_launch():
    """scripts/device/compact_ncu.sh names ncu's columns by kernel: each placement's own kernel is the placement,
    its alternative the placement with the option that picks it (the A/B rows' names, threads aside)."""
    text = (ROOT / "scripts" / "device" / "compact_ncu.sh").read_text()
    labels = {k: v.strip('"') for k, v in re.findall(r'--label (\w+)=("[^"]*"|\S+)', text.split("LABELS=(")[1])}
    want = {}
    for name in PLACEMENTS:
        pl = _cpu_placement(name)
        kernel = pl.kernel
        want[pl.launched] = name  # the build it launches (gpu-fused: its 4-way split)
        if kernel in ALTERNATIVES:
            option, value, alternative = ALTERNATIVES[kernel]
            want[alternative] = Variant(name, **{option: value}).label.replace(f" threads={THREADS}", "")
        if kernel in OTHER_LAYOUTS:
            value, _layout, other = OTHER_LAYOUTS[kernel]
            want[other] = Variant(name, layout=value).label.replace(f" threads={THREADS}", "")
    assert labels == want


def test_the_driver_exits_2_naming_the_placements_on_a_bad_one():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "device" / "compact_ncu.py"), "ab", "--out",
                           "x.jsonl", "--placements", "gpu-fused,nope"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "unknown placement 'nope'" in proc.stderr and "gpu-compact-fused" in proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("name", PLACEMENTS)
def test_every_checked_variant_writes_the_default_batch_and_a_moved_successor_does_not(name):
    from rlperf.replay.kernel_probe import build, same_output
    from rlperf.replay.tables import release_tables

    pl = build(name, 12)
    try:
        for v in variants(name, elided=pl.layout.elide_next, kernel=pl.kernel):  # its alternative too
            if v.checked:
                assert same_output(pl, v), v.label
            else:  # other rows or another plan: the factor really changes what the kernel reads
                assert not same_output(pl, v), v.label
    finally:
        del pl
        release_tables()
        torch.cuda.synchronize()
