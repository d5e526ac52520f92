"""Every named selection (`rlperf backfill --selection`) names benchmarks, params and values that exist in the
committed suite metadata, so no selected point is silently absent; the GPU history covers every single-GPU
placement of the GPU gathers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlperf.asvtools import bench_plan

META = Path(__file__).resolve().parents[2] / "results" / "asv" / "benchmarks.json"


def _benchmarks() -> dict:
    return {name: b for name, b in json.loads(META.read_text()).items() if name != "version"}


@pytest.mark.parametrize("selection", sorted(bench_plan.SELECTIONS))
def test_a_selection_names_only_existing_benchmarks_params_and_values(selection):
    meta = _benchmarks()
    for key, products in bench_plan.SELECTIONS[selection].items():
        matched = [b for name, b in meta.items() if name == key or name.startswith(key + ".")]
        assert matched, f"{selection}: {key} is no benchmark of {META.name}"
        for b in matched:
            values = dict(zip(b["param_names"], b["params"]))
            for product in products:
                for param, wanted in product.items():
                    assert param in values, f"{selection}: {b['name']} has no param {param!r} ({b['param_names']})"
                    missing = {repr(v) for v in wanted} - set(values[param])
                    assert not missing, f"{selection}: {b['name']} {param} has no {sorted(missing)}"


def test_the_gpu_history_plan():
    plan = bench_plan.make_plan(list(_benchmarks().values()), points=bench_plan.SELECTIONS["gpu-history"])
    by_bench: dict[str, int] = {}
    for p in plan.run:
        by_bench[p.benchmark] = by_bench.get(p.benchmark, 0) + 1
    assert by_bench == {"bench_replay.ReplayGpuSample.track_ms": 11, "bench_replay.ReplayEndToEnd.track_ms": 3,
                        "bench_e2e.E2ELearner.track_iteration_ms": 1,
                        "bench_e2e.E2EIteration.track_env_steps_per_s": 3,
                        "bench_e2e.E2EIteration.track_exposed_replay_wait_ms": 3,
                        "bench_e2e.E2EIteration.track_iteration_ms": 3}
    assert {p.params for p in plan.run if p.benchmark.endswith("ReplayEndToEnd.track_ms")} == {
        ("20", f"'{name}'", "1") for name in ("host", "uva", "gpu-cache")}
    without_cuda = bench_plan.make_plan(list(_benchmarks().values()), points=bench_plan.SELECTIONS["gpu-history"],
                                        cuda=False)
    assert not without_cuda.run and len(without_cuda.not_run) == 24  # every point needs a GPU


def test_the_gpu_history_takes_every_single_gpu_placement_of_the_gathers():
    from rlperf.replay.cases import ALL_SPECS
    from rlperf.replay.metrics import GPU_SAMPLE

    single = {name for name, spec in ALL_SPECS.items() if GPU_SAMPLE in spec.metrics and not spec.multi_rank}
    assert set(bench_plan.GPU_SAMPLE_PLACEMENTS) == single


def test_the_cpu_history_holds_only_points_a_cpu_box_with_the_base_install_measures():
    """No point that needs CUDA or an optional extra (torchrl-host was n/a on every stored commit of the CPU
    history: the `rlperf[torchrl]` extra is not installed there), so every commit can hold the whole selection."""
    from rlperf.replay.cases import ALL_SPECS

    meta = _benchmarks()
    plan = bench_plan.make_plan(list(meta.values()), points=bench_plan.SELECTIONS["history"], cuda=False)
    assert not plan.not_run and len(plan.run) == 63
    for p in plan.run:
        values = dict(zip(meta[p.benchmark]["param_names"], p.params))
        if "placement" in values:
            spec = ALL_SPECS[values["placement"].strip("'")]
            assert not spec.needs_cuda and not spec.requires, p.name
