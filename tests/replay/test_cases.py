"""Replay cases: guards skip infeasible points with bytes named; placements gather the right rows."""

import pytest
import torch

from rlperf.errors import UsageError
from rlperf.commands.args import parse_positive_list
from rlperf.replay.cases import ReplayCase, Resources, feasibility, iter_cases
from rlperf.replay.placements import SPECS
from rlperf.replay.run import run_case

GIB = 2**30
# The machines we have: this CPU box, the H200 host (one GPU), an 8 x H200 host.
MACHINES = {
    "cpu-2vcpu": Resources(0, 23 * GIB, 0),
    "h200": Resources(1, 125 * GIB, 139 * GIB),
    "8xh200": Resources(8, 550 * GIB, 139 * GIB),
}


FP32_PLACEMENTS = [name for name, spec in SPECS.items() if spec.layout_name.startswith("fp32")]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("exp", [28, 30])
@pytest.mark.parametrize("placement", FP32_PLACEMENTS)
def test_2_28_and_2_30_rows_are_skipped_on_every_machine_with_bytes_named(machine, exp, placement):
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", placement, 2**exp), MACHINES[machine])
    assert not verdict.ok
    assert "GiB" in verdict.reason and "B)" in verdict.reason or "CUDA" in verdict.reason


def test_the_h200_fits_2_24_rows_on_host_and_device_but_not_2_26():
    h200 = MACHINES["h200"]
    for placement in ("host", "gpu", "gpu-padded"):
        assert feasibility(ReplayCase("g1_motion_tracking", "motrix", placement, 2**24), h200).ok
        reason = feasibility(ReplayCase("g1_motion_tracking", "motrix", placement, 2**26), h200).reason
        assert "needs" in reason and "GiB" in reason


def test_gpu_counts_beyond_the_visible_devices_are_skipped_with_the_count():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu", 2**20, gpus=8), MACHINES["h200"])
    assert not verdict.ok and "needs 8 GPUs, 1 visible" in verdict.reason


def test_gpu_placements_say_why_they_cannot_run_without_cuda():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu", 2**20), MACHINES["cpu-2vcpu"])
    assert not verdict.ok and "needs a CUDA device" in verdict.reason


@pytest.mark.parametrize("text, expected", [("1,2,2,4", [1, 2, 4]), (" 8 ", [8])])
def test_list_flags_are_deduplicated_in_order(text, expected):
    assert parse_positive_list(text, "--x") == expected


@pytest.mark.parametrize("text", ["0", "-1", "a", "1,,2", ""])
def test_list_flags_reject_non_positive_and_non_integer_values(text):
    with pytest.raises(UsageError, match="--x"):
        parse_positive_list(text, "--x")


def test_unknown_placement_lists_the_valid_ones():
    with pytest.raises(UsageError, match="valid: host, host-pageable"):
        iter_cases(placements=("host", "teleport"))


@pytest.mark.parametrize("placement", ["host", "host-pageable", "host-pipelined"])
def test_host_placements_gather_exactly_the_rows_they_drew_on_cpu(placement):
    case = ReplayCase("g1_motion_tracking", "motrix", placement, 4096)
    outcome = run_case(case, Resources.probe(), warmup=0, repeat=2, threads=1, seed=3)
    if not torch.cuda.is_available() and placement == "host-pipelined":
        assert outcome.result is None and outcome.skipped[0]["metric"] == "cpu_sample_then_h2d_wall"
        return
    if not torch.cuda.is_available():
        assert list(outcome.result["timings"]) == ["cpu_sample_wall"]
        assert {s["metric"] for s in outcome.skipped} == {"cpu_sample_h2d_wall", "cpu_sample_then_h2d_wall"}
    assert outcome.result["verified"] is True
    table = outcome.result["host_table"]  # the backing its table had, kept beside the times (huge pages: docs)
    assert table["nbytes"] == 4096 * 930 * 4 and table["rss_bytes"] > 0
    for timing in outcome.result["timings"].values():
        assert len(timing["samples_ms"]) == 2 and timing["min_ms"] <= timing["median_ms"] <= timing["max_ms"]


@pytest.mark.gpu
@pytest.mark.parametrize("placement", list(SPECS))
def test_every_placement_verifies_and_times_on_a_gpu(placement):
    if SPECS[placement].unavailable_reason():  # an optional library (cupy, torchrl) is not installed
        pytest.skip(SPECS[placement].unavailable_reason())
    case = ReplayCase("g1_motion_tracking", "motrix", placement, 2**16)
    outcome = run_case(case, Resources.probe(), warmup=1, repeat=3, threads=4, seed=5)
    assert outcome.result is not None, outcome.skipped
    assert set(outcome.result["timings"]) == set(SPECS[placement].metrics)


@pytest.mark.gpu
def test_padded_gpu_rows_are_16_byte_aligned_and_hide_the_padding():
    from rlperf.replay.build import build_placement
    from rlperf.replay.run import learner_device

    case = ReplayCase("g1_motion_tracking", "motrix", "gpu-padded", 2**14)
    p = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=1, seed=0)
    p.setup()
    rows = p.sample()
    assert rows.shape[1] == 930 and p.table.shape[1] == 932 and p.table.stride(0) * 4 % 16 == 0


def test_a_placement_missing_its_library_is_skipped_with_the_library_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cupy" else real(name, *a))
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "uva", 2**20), MACHINES["h200"])
    assert not verdict.ok and "needs cupy" in verdict.reason


def test_asv_skips_infeasible_points_without_importing_torch():
    """asv spawns a process per parameter point: a skip must not pay for importing torch."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; sys.path.insert(0, '.'); from benchmarks import bench_replay\n"
            "try:\n    bench_replay.ReplayGpuSample().setup(30, 'gpu', 64)\n"
            "except NotImplementedError as e:\n    print('skip', e)\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout
    assert "skip needs 64 GPUs" in out and out.strip().endswith("False")


def test_torch_threads_count_the_cores_the_process_may_run_on_not_the_machines(monkeypatch):
    """A process pinned to one core of two ran two torch threads on it (bimodal gathers, docs/history.md)."""
    import os

    from rlperf.replay import cases

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert cases.default_torch_threads(1) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert cases.default_torch_threads(2) == 4 and cases.default_torch_threads(16) == 1
