"""`rlperf plan`: ranking on a fixture of ceilings, infeasible points with reasons, measured figures, bad input."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rlperf.cli import main
from rlperf.errors import UsageError
from rlperf.plan import MachineCeilings, candidates, plan
from rlperf.plan.candidates import RANK_TRANSFER_OF, TRANSFER_OF, TRANSFERS
from rlperf.plan.ceilings import from_results
from rlperf.replay.multirank import RANK_SPECS
from rlperf.replay.placements import PLACEMENTS
from rlperf.replay.placements.specs import TRANSFERS as REGISTRY_TRANSFERS

GIB = 2**30
MT = dict(obs=160, act=29, critic=289, sample_rows=32_768)  # g1_motion_tracking: 930 floats, S = 32,768
BATCH = 32_768 * 3_720  # 121,896,960 B
PADDED_BATCH = 32_768 * 3_728
SLIM_BATCH = 32_768 * 1_872  # bf16 vectors and actions, one-byte flags, padded to 16 bytes
# A round-number machine: 100 GB/s host copy, 50 GB/s pinned H2D, 4 TB/s HBM copy, 100 GiB free on each side.
FIXTURE = MachineCeilings(machine="fixture", source="test", host_copy_Bps=100e9, h2d_Bps=50e9, d2d_Bps=4e12,
                          host_free_bytes=100 * GIB, device_free_bytes=100 * GIB, gpu_count=1)
CPU_BOX = MachineCeilings(machine="cpu-box", source="test", host_copy_Bps=20e9, h2d_Bps=None, d2d_Bps=None,
                          host_free_bytes=20 * GIB, device_free_bytes=0, gpu_count=0)


def _plan(ceil=FIXTURE, capacity_rows=2**20, gpus=1, layout="native", results=None):
    return plan(**MT, capacity_rows=capacity_rows, gpus=gpus, layout=layout, ceil=ceil, results=results)


def _by_name(rows):
    return {r.name: r for r in rows}


def test_every_registered_placement_is_a_candidate_with_a_known_transfer():
    names = {c.name for c in candidates(1)}
    assert names == {*PLACEMENTS, *RANK_SPECS}
    assert {"torchrl-host", "torchrl-device-td", "gpu-bf16", "host-compact"} <= names  # peers and new layouts
    assert {c.name for c in candidates(4)} == set(RANK_SPECS)
    # a new registry transfer or rank placement needs a time model here
    assert set(TRANSFER_OF) == set(REGISTRY_TRANSFERS) and set(RANK_TRANSFER_OF) == set(RANK_SPECS)
    assert {*TRANSFER_OF.values(), *RANK_TRANSFER_OF.values()} == set(TRANSFERS)
    by_name = {c.name: c for c in candidates(1)}
    assert by_name["gpu-compact"].layout_name == "compact" and by_name["torchrl-host"].transfer == "h2d-repin"


def test_fixture_ranking_follows_the_bytes_over_each_critical_resource():
    rows = _plan()
    assert all(r.feasible for r in rows)
    ms = {r.name: r.estimate.model_ms for r in rows}
    # HBM gather reads + writes the batch: 2 x 121,896,960 B at 4 TB/s
    assert ms["gpu"] == pytest.approx(2 * BATCH / 4e12 * 1e3)
    # cache: the 2^20-row cache refreshes 1/256 of itself (4,096 padded rows) per iteration over PCIe
    assert ms["gpu-cache"] == pytest.approx(4_096 * 3_728 / 50e9 * 1e3)
    assert ms["uva"] == pytest.approx(PADDED_BATCH / (0.9 * 50e9) * 1e3)  # 16-byte rows, 90% of PCIe
    gather, copy = 2 * BATCH / 100e9 * 1e3, BATCH / 50e9 * 1e3
    assert ms["host-pipelined"] == pytest.approx(max(gather, copy) * 9 / 8)
    assert ms["host"] == pytest.approx(gather + copy)
    assert ms["torchrl-host"] == pytest.approx(gather + gather + copy)  # the buffer pins each batch: a host copy more
    # bf16 and compact layouts move their own batch rows (1,872 B: elision saves storage, not traffic)
    assert ms["gpu-bf16"] == pytest.approx(ms["gpu-compact"]) == pytest.approx(2 * SLIM_BATCH / 4e12 * 1e3)
    assert ms["host-bf16"] == pytest.approx(ms["host-compact"]) == pytest.approx(
        2 * SLIM_BATCH / 100e9 * 1e3 + SLIM_BATCH / 50e9 * 1e3)
    assert ms["uva-bf16"] == pytest.approx(SLIM_BATCH / (0.9 * 50e9) * 1e3)
    order = [r.name for r in rows]
    first = lambda names: min(order.index(n) for n in names)  # noqa: E731
    last = lambda names: max(order.index(n) for n in names)  # noqa: E731
    device = ("gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded", "torchrl-device", "torchrl-device-td")
    assert last(device) < order.index("sharded-global") < order.index("gpu-cache") < order.index("uva") \
        < order.index("host-pipelined") < first(("host", "host-pageable", "shared-host")) \
        < order.index("torchrl-host")
    # equal time: less device memory first (TorchRL keeps one batch on the device, the ring two)
    assert order.index("torchrl-device") < order.index("gpu")
    assert order.index("gpu") < order.index("gpu-padded")  # 8 more bytes per row
    for slim, fp32 in (("gpu-bf16", "gpu"), ("host-bf16", "host"), ("uva-bf16", "uva")):
        assert order.index(slim) < order.index(fp32)
    # equal time: the compact ring (976 B stored rows) needs less device memory than the bf16 one
    assert order.index("gpu-compact") < order.index("gpu-bf16")


def test_layout_changes_the_row_and_keeps_a_placements_alignment():
    rows = _by_name(_plan(layout="bf16-slim"))
    assert rows["gpu"].estimate.row_bytes == 1_872
    assert rows["gpu"].estimate.model_ms == pytest.approx(2 * SLIM_BATCH / 4e12 * 1e3)
    packed = _by_name(_plan(layout="fp32"))
    assert packed["gpu"].estimate.row_bytes == 3_720 and packed["uva"].estimate.row_bytes == 3_728  # padded to 16
    compact = _by_name(_plan(layout="compact"))
    assert compact["gpu"].estimate.row_bytes == 976  # stored; the batch still moves 1,872 B rows
    assert compact["gpu"].estimate.bytes["device_read"] == SLIM_BATCH


def test_the_compact_ring_fits_2_26_rows_where_packed_rows_do_not():
    rows = _by_name(_plan(capacity_rows=2**26))
    assert rows["gpu-compact"].feasible and not rows["gpu"].feasible and not rows["gpu-bf16"].feasible
    assert rows["gpu-compact"].estimate.device_bytes > 2**26 * 976  # the terminal table and slot index count


def test_infeasible_points_name_bytes_needed_and_available():
    rows = _by_name(_plan(capacity_rows=2**26))  # 232.5 GiB of packed rows
    assert not rows["gpu"].feasible and "device memory" in rows["gpu"].reason and "free 100.00 GiB" in rows["gpu"].reason
    assert not rows["host"].feasible and "host memory" in rows["host"].reason and "232." in rows["host"].reason
    ordered = _plan(capacity_rows=2**26)
    assert [r.feasible for r in ordered] == sorted((r.feasible for r in ordered), reverse=True)


def test_cpu_machine_models_host_gather_only_and_rejects_gpu_placements():
    rows = _by_name(_plan(ceil=CPU_BOX))
    assert rows["host"].feasible and rows["host"].estimate.model_ms == pytest.approx(2 * BATCH / 20e9 * 1e3)
    assert any("stays on the host" in n for n in rows["host"].notes)
    assert not rows["gpu"].feasible and "needs a CUDA device; cpu-box has none" in rows["gpu"].reason
    assert not rows["uva"].feasible


def test_more_gpus_than_the_machine_has_and_unsplittable_shards():
    assert all(not r.feasible and "needs 2 GPUs, fixture has 1" in r.reason for r in _plan(gpus=2))
    two = dataclasses.replace(FIXTURE, gpu_count=2)
    rows = _by_name(_plan(ceil=two, gpus=2, capacity_rows=1_000_001))
    assert "does not split into 2 equal shards" in rows["sharded-global"].reason
    assert rows["gpu-replica"].feasible


def _results_doc(**extra):
    return {"schema": "rlperf.replay", "schema_version": 1,
            "machine": {"name": "box", "gpu_count": 1, "gpu_memory_bytes": 100 * GIB,
                        "ram_available_bytes_at_start": 100 * GIB},
            "ceilings": {"host_copy_Bps": 100e9, "h2d_pinned_Bps": 50e9, "d2d_Bps": 4e12},
            "results": [
                {"placement": "gpu", "world_size": 1, "capacity_rows": 2**20, "stored_row_bytes": 3_720,
                 "timings": {"gpu_sample_wall": {"median_ms": 0.124}}},
                {"placement": "host", "world_size": 1, "capacity_rows": 2**20, "stored_row_bytes": 3_720,
                 "timings": {"cpu_sample_wall": {"median_ms": 3.7}, "cpu_sample_then_h2d_wall": {"median_ms": 6.6}}},
            ],
            "skipped": [{"placement": "uva", "world_size": 1, "capacity_rows": 2**20, "metric": None,
                         "reason": "placement 'uva' needs cupy; not installed"}], **extra}


def test_last_measured_figure_sits_beside_the_model_of_the_same_point():
    doc = _results_doc()
    ceil = from_results(doc, "test.json")
    assert ceil.h2d_Bps == 50e9 and ceil.device_free_bytes == 100 * GIB and "total" in ceil.notes[-1]
    rows = _by_name(_plan(ceil=ceil, results=doc))
    assert rows["gpu"].measured.median_ms == 0.124 and rows["gpu"].measured.metric == "gpu_sample_wall"
    assert rows["host"].measured.metric == "cpu_sample_then_h2d_wall"  # the end-to-end figure wins
    assert "cupy" in rows["uva"].measured_note
    assert rows["gpu-fused"].measured is None and rows["gpu-fused"].measured_note == "not measured at this point"
    other = _by_name(_plan(ceil=ceil, results=doc, layout="bf16-slim"))
    assert other["gpu"].measured is None and "3,720 B rows" in other["gpu"].measured_note


def test_run_without_ceilings_is_a_usage_error():
    with pytest.raises(UsageError, match="--no-ceilings"):
        from_results(_results_doc(ceilings={}), "x.json")


@pytest.fixture
def results_dir(tmp_path):
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "results.json").write_text(json.dumps(_results_doc()))
    return tmp_path


def test_cli_ranks_from_a_machines_results(results_dir, capsys):
    assert main(["plan", "--machine", "box", "--results-dir", str(results_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ceilings"]["machine"] == "box" and out["rows"][0]["feasible"]
    names = [r["name"] for r in out["rows"]]
    assert names.index("gpu") < names.index("host")
    assert main(["plan", "--results", str(results_dir / "box" / "results.json"), "--capacity-exponent", "30"]) == 1
    text = capsys.readouterr().out
    assert "infeasible:" in text and "- gpu: device memory" in text


@pytest.mark.parametrize("argv, message", [
    (["--layout", "fp8"], "unknown layout 'fp8'; valid: native, fp32, fp32-padded"),
    (["--gpus", "0"], "--gpus takes one positive integer, e.g. --gpus 1; got '0'"),
    (["--gpus", "1,2"], "--gpus takes one positive integer, e.g. --gpus 1; got '1,2'"),
    (["--capacity-exponent", "41"], "beyond any machine"),
    (["--capacity-rows", "-5"], "--capacity-rows takes one positive integer, e.g. --capacity-rows 1; got '-5'"),
    (["--host-free-gib", "nan"], "--host-free-gib: nan must be a finite positive number of GiB"),
    (["--device-free-gib", "inf"], "--device-free-gib: inf must be a finite positive number of GiB"),
    (["--task", "g1_flip"], "unknown task 'g1_flip'; valid: g1_motion_tracking, g1_walk_flat"),
    (["--machine", "nowhere"], "no replay results for machine 'nowhere'"),
])
def test_cli_bad_input_exits_2_naming_the_valid_choices(results_dir, capsys, argv, message):
    source = [] if "--machine" in argv else ["--machine", "box"]
    assert main(["plan", "--results-dir", str(results_dir), *source, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    if "nowhere" in argv:
        assert "valid: box" in err


def test_cli_rejects_a_foreign_json(tmp_path, capsys):
    path = tmp_path / "env.json"
    path.write_text(json.dumps({"schema": "rlperf.env", "schema_version": 1}))
    assert main(["plan", "--results", str(path)]) == 2
    assert "not an rlperf 'rlperf.replay' result" in capsys.readouterr().err


def test_stated_free_memory_replaces_the_runs_figure(results_dir, capsys):
    argv = ["plan", "--machine", "box", "--results-dir", str(results_dir), "--capacity-exponent", "24"]
    assert main([*argv, "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["host"]["feasible"]  # 58 GiB within 0.8 x 100 GiB
    assert main([*argv, "--host-free-gib", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ceilings"]["host_free_bytes"] == 50 * GIB and "--host-free-gib 50 given" in out["ceilings"]["notes"]
    assert not {r["name"]: r for r in out["rows"]}["host"]["feasible"]
    assert main([*argv, "--device-free-gib", "0"]) == 2
    assert "--device-free-gib: 0 must be a finite positive number of GiB" in capsys.readouterr().err


def test_an_infeasible_point_the_run_did_measure_says_so(results_dir, capsys):
    assert main(["plan", "--machine", "box", "--results-dir", str(results_dir), "--host-free-gib", "1"]) == 0
    out = capsys.readouterr().out
    assert "- host: host memory" in out and "yet the run measured this point: 6.600 ms" in out


def test_measure_flag_takes_this_machines_ceilings_and_free_memory(monkeypatch, capsys):
    """--measure goes through rlperf.measure.ceilings (stubbed here: the real one copies 1 GiB buffers)."""
    import rlperf.measure.ceilings as ceilings_module
    from rlperf.replay import cases

    calls = []
    monkeypatch.setattr(ceilings_module, "measure_ceilings",
                        lambda device, *, threads: calls.append((device, threads)) or {"host_copy_Bps": 10e9})
    monkeypatch.setattr(cases.Resources, "probe", classmethod(lambda cls: cls(0, 64 * GIB, 0)))
    assert main(["plan", "--measure", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert calls and out["ceilings"]["source"] == "measured now" and out["ceilings"]["host_copy_Bps"] == 10e9
    rows = {r["name"]: r for r in out["rows"]}
    assert rows["host"]["feasible"] and rows["host"]["measured_note"].startswith("no run loaded")
    assert not rows["gpu"]["feasible"] and "has none" in rows["gpu"]["reason"]


def test_cli_table_is_aligned(results_dir, capsys):
    assert main(["plan", "--machine", "box", "--results-dir", str(results_dir)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert len(rows) >= 3 and len({len(line) for line in rows}) == 1  # one width: the columns line up
    assert [c.strip() for c in rows[0].strip("|").split("|")][:2] == ["rank", "placement"]


def test_cli_when_nothing_fits_it_says_so_and_exits_1_without_an_empty_table(results_dir, capsys):
    assert main(["plan", "--machine", "box", "--results-dir", str(results_dir), "--gpus", "64"]) == 1
    out = capsys.readouterr().out
    assert "no placement fits" in out and "infeasible:" in out
    assert "| rank" not in out


def test_cli_warns_when_the_results_are_marked_superseded(results_dir, capsys):
    (results_dir / "box" / "SUPERSEDED.md").write_text("# Superseded\n\nceilings replaced by a later run.\n")
    assert main(["plan", "--machine", "box", "--results-dir", str(results_dir)]) == 0
    captured = capsys.readouterr()
    assert "is marked superseded" in captured.err
    assert "WARNING: these results are marked superseded (ceilings replaced by a later run.)" in captured.out
