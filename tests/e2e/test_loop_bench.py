"""The asv e2e suite: GPU points skip with a reason on a CPU box, the tracks carry their directions, a
point is measured alone (or skipped with its reason), and the CPU collector point runs or skips."""

from __future__ import annotations

import pytest

import benchmarks.bench_e2e as bench
from rlperf.e2e.loop import collectors
from tests.e2e.test_loop_fake import TINY


def test_directions_for_the_gate():
    assert bench.E2EIteration.track_env_steps_per_s.direction == "higher"
    assert not hasattr(bench.E2EIteration.track_iteration_ms, "direction")  # a cost: asv's lower-is-better
    assert not hasattr(bench.E2EIteration.track_exposed_replay_wait_ms, "direction")


def test_skip_all_is_a_reason_in_setup():
    cache = {"folder": "/nonexistent", "skip_all": "e2e iteration needs a CUDA device for the learner; none visible (nvidia-smi)"}
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        bench.E2EIteration().setup(cache, "g1_walk_flat", "gpu-fused", "one_tick")


def test_a_point_is_measured_alone_or_skipped_with_its_reason(monkeypatch, fake_collector, g1_model):
    point = bench.measure_point("g1_walk_flat", "host", "one_tick", iterations=2, warmup=0, overrides=TINY, threads=1)
    assert len(point["iteration_ms"]) == len(point["exposed_replay_wait_ms"]) == 2
    assert all(v > 0 for v in point["env_steps_per_s"])
    assert "needs a CUDA device" in bench.measure_point("g1_walk_flat", "gpu", "none", iterations=2, warmup=0,
                                                         overrides=TINY, threads=1)["skip"]


@pytest.mark.parametrize("task", bench.TASKS)
def test_the_iteration_runs_at_2048_envs(task):
    """Issue 22 §4 reads E2EIteration at 2,048 envs: the tasks' configured count, which measure_point uses."""
    from rlperf.workload import compose

    assert compose(task, bench.SIM, []).num_envs == 2048


def test_collector_point_skips_without_the_collector(monkeypatch):
    monkeypatch.setattr(collectors, "COLLECTOR_MODULE", "rlperf.e2e.no_such_collector")
    with pytest.raises(NotImplementedError, match="is not installed"):
        bench.E2ECollectorStep().setup("g1_walk_flat", "fused")


def test_collector_point_runs_with_a_collector(monkeypatch, fake_collector):
    monkeypatch.setattr(bench, "COLLECTOR_ENVS", 32)
    monkeypatch.setattr(bench.E2ECollectorStep, "_cached", {})
    b = bench.E2ECollectorStep()
    b.setup("g1_walk_flat", "numpy")
    assert len(b.track_step_ms("g1_walk_flat", "numpy")["samples"]) == bench.COLLECTOR_STEPS


def test_learner_point_skips_without_cuda(monkeypatch):
    monkeypatch.setattr("rlperf.measure.guards.nvidia_smi_free_bytes", lambda: [])
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        bench.E2ELearner().setup("g1_motion_tracking", "eager")


def test_points_skip_without_the_g1_model(monkeypatch):
    """Without the e2e extra, the collector point and the walk learner point skip with the install hint, instead of
    failing inside the collector or the learner's mirror; the motion-tracking learner (no mirror) is not held back."""
    from rlperf.e2e.collector import assets
    from rlperf.e2e.learner.timing import learner_missing_reason

    monkeypatch.setattr(assets, "ASSET_PACKAGE", "rlperf_no_such_asset_package")
    with pytest.raises(NotImplementedError, match="G1 model needs .*rlperf_no_such_asset_package.*pip install"):
        bench.E2ECollectorStep().setup("g1_walk_flat", "fused")
    monkeypatch.setattr("rlperf.measure.guards.nvidia_smi_free_bytes", lambda: [80 << 30])
    with pytest.raises(NotImplementedError, match="g1_walk_flat learner mirrors .*rlperf_no_such_asset_package"):
        bench.E2ELearner().setup("g1_walk_flat", "eager")
    assert learner_missing_reason("g1_motion_tracking", bench.SIM) is None
