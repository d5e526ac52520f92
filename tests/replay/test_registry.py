"""The placement registry: historical names keep their parts, configuration builds new combinations,
invalid ones are refused with the reason, and guards use each layout's own bytes."""

import pytest

from rlperf.errors import UsageError
from rlperf.replay.cases import ReplayCase, Resources, feasibility
from rlperf.replay.placements import PLACEMENTS, lookup, parse_combination, valid_combinations
from rlperf.replay.placements.specs import invalid_reason

GIB = 2**30
H200 = Resources(1, 125 * GIB, 139 * GIB)
HISTORICAL = ("host", "host-pageable", "host-pipelined", "uva", "gpu", "gpu-padded", "gpu-fused",
              "gpu-fused-padded", "gpu-cache")


def test_historical_names_are_the_same_parts_as_before():
    parts = {n: (PLACEMENTS[n].storage, PLACEMENTS[n].sampler, PLACEMENTS[n].transfer) for n in HISTORICAL}
    assert parts["gpu"] == ("device-fp32", "torch", "none")
    assert parts["gpu-fused-padded"] == ("device-fp32-padded", "fused", "none")
    assert parts["uva"] == ("host-pinned-fp32-padded", "torch", "uva")
    assert parts["host-pageable"] == ("host-fp32", "torch", "h2d-pageable")


def test_the_fused_zero_copy_placements_are_uva_with_the_counter_sampler():
    for name, storage in (("uva-fused", "host-pinned-fp32-padded"), ("uva-fused-bf16", "host-pinned-bf16-slim")):
        assert (PLACEMENTS[name].storage, PLACEMENTS[name].sampler, PLACEMENTS[name].transfer) == (storage, "fused",
                                                                                                  "uva")
        assert lookup(f"storage={storage},sampler=fused,transfer=uva") is PLACEMENTS[name]
    assert "elides next_obs" in invalid_reason("host-pinned-compact", "fused", "uva")


def test_configuration_builds_a_combination_and_finds_its_name():
    assert lookup("storage=device-bf16-slim,sampler=fused").name == "gpu-fused-bf16"
    spec = parse_combination("storage=device-bf16,sampler=fused")
    assert spec.name == "storage=device-bf16,sampler=fused,transfer=none" and lookup(spec.name) == spec


def test_the_registry_lists_valid_combinations_only_and_every_named_one():
    combos = valid_combinations()
    assert all(invalid_reason(s.storage, s.sampler, s.transfer) is None for s in combos)
    assert set(PLACEMENTS.values()) <= set(combos) and len(set(combos)) == len(combos)


@pytest.mark.parametrize("storage, sampler, transfer, why", [
    ("host-fp32", "torch", "uva", "reads host-pinned"),
    ("host-pinned-fp32", "torch", "uva", "not padded to 16 bytes"),
    ("host-pinned-compact", "torch", "uva", "elides next_obs"),
    ("host-pinned-compact", "torch", "cache", "elides next_obs"),
    ("host-fp32", "fused", "h2d", "samples with torch"),
    ("device-fp32", "torch", "h2d", "reads host storage"),
])
def test_invalid_combinations_say_why(storage, sampler, transfer, why):
    assert why in invalid_reason(storage, sampler, transfer)
    with pytest.raises(UsageError, match=why):
        lookup(f"storage={storage},sampler={sampler},transfer={transfer}")


@pytest.mark.parametrize("text, why", [("storage=disk-fp32", "valid: device-fp32, "),
                                       ("storage=device-fp32,speed=fast", "keys sampler, storage, transfer"),
                                       ("sampler=fused", "needs storage="), ("teleport", "valid: host")])
def test_bad_names_and_configs_name_the_valid_choices(text, why):
    with pytest.raises(UsageError, match=why):
        lookup(text)


def test_2_26_compact_rows_fit_one_h200_by_their_own_bytes_and_2_28_do_not():
    fits = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-compact", 2**26), H200)
    assert fits.ok, fits.reason
    for exp in (28, 30):
        reason = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-compact", 2**exp), H200).reason
        assert "needs" in reason and "free" in reason and "GiB" in reason
    packed = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu", 2**26), H200)
    assert not packed.ok


def test_the_guard_counts_the_terminal_table_and_slot_index():
    spec = PLACEMENTS["gpu-compact"]
    layout = spec.stored_layout(ReplayCase("g1_motion_tracking", "motrix", "gpu", 1).workload.layout)
    need = spec.memory_need(layout.dims, 2**20, 32768)
    assert need.device_bytes > 2**20 * layout.stored_row_bytes + 2 * 32768 * layout.batch_row_bytes


def test_the_rank_runner_does_not_import_the_single_rank_runner():
    """The old circle run -> cases -> multirank -> run: shared records now live in replay.records."""
    import ast
    from pathlib import Path

    import rlperf.replay.multirank as multirank

    for path in [*Path(multirank.__file__).parent.glob("*.py"), Path(multirank.__file__).parents[1] / "records.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "rlperf.replay.run", f"{path.name} imports rlperf.replay.run"
            if isinstance(node, ast.Import):
                assert all(a.name != "rlperf.replay.run" for a in node.names), path.name


def test_infrastructure_error_lives_in_errors_and_gate_re_exports_it():
    from rlperf.errors import InfrastructureError
    from rlperf.gate import InfrastructureError as from_gate

    assert from_gate is InfrastructureError


def test_asv_tracks_peak_host_bytes_of_a_placement_above_its_storage():
    from benchmarks import bench_replay

    bench = bench_replay.ReplayPeakMemory()
    bench.setup(14, "host-compact")  # any exponent works when called directly
    spec = PLACEMENTS["host-compact"]
    layout = spec.stored_layout(ReplayCase("g1_motion_tracking", "motrix", "host", 1).workload.layout)
    assert bench.track_host_peak_bytes(14, "host-compact") > layout.table_bytes(2**14)
    from asv_runner.benchmarks.mark import SkipNotImplemented

    from rlperf.replay.run import learner_device

    if learner_device() is None:  # no device, no device peak: n/a, not 0 bytes
        with pytest.raises(SkipNotImplemented):
            bench.track_device_peak_bytes(14, "host-compact")
    else:
        assert bench.track_device_peak_bytes(14, "host-compact") >= 0


def test_one_registry_holds_every_placement_and_each_spec_says_how_it_runs():
    from rlperf.replay.cases import DEFAULT_PLACEMENTS
    from rlperf.replay.registry import REGISTRY, multi_rank_placements, spec_of

    ranks = ("shared-host", "gpu-replica", "rank-local", "sharded-global")
    # `rlperf replay --placements` and the asv lists keep their order: single-GPU first, rank placements last
    assert DEFAULT_PLACEMENTS == tuple(PLACEMENTS) + ranks == tuple(REGISTRY)
    assert multi_rank_placements() == ranks
    assert all(REGISTRY[n].world_size == 0 for n in ranks)
    assert all(spec.world_size == 1 and not spec.multi_rank for spec in PLACEMENTS.values())
    assert not spec_of("storage=device-bf16,sampler=fused").multi_rank
    with pytest.raises(UsageError, match="sharded-global"):
        spec_of("no-such-placement")


def test_replay_the_asv_suite_and_the_e2e_loop_build_placements_one_way():
    """Nothing but replay.build constructs a single-process placement from its spec (rank processes build
    theirs in multirank.worker, with the shared table and process group)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    builders = [p.relative_to(root).as_posix() for d in ("src", "benchmarks") for p in (root / d).rglob("*.py")
                if re.search(r"\.load\(\)\(spec=", p.read_text())]
    assert builders == ["src/rlperf/replay/build.py"]
