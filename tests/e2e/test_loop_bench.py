"""The asv e2e suite: GPU points skip with a reason on a CPU box, the tracks carry their directions,
the cache maps every point (measured or skipped), and the CPU collector point runs or skips."""

from __future__ import annotations

import pytest

import benchmarks.bench_e2e as bench
from rlperf.e2e.loop import collectors
from tests.e2e.test_loop_fake import FakeCollector

TINY = ["algo.num_envs=16", "algo.replay_buffer_n=8", "algo.batch_size=32", "algo.actor_hidden_dim=16",
        "algo.critic_hidden_dim=16", "algo.num_atoms=11", "algo.use_compile=false", "training.use_amp=false"]


@pytest.fixture
def fake_collector(monkeypatch):
    monkeypatch.setattr(collectors, "load_collector_class", lambda: FakeCollector)
    monkeypatch.setattr(collectors, "collector_missing_reason", lambda: None)


def test_directions_for_the_gate():
    assert bench.E2EIteration.track_env_steps_per_s.direction == "higher"
    assert not hasattr(bench.E2EIteration.track_iteration_ms, "direction")  # a cost: asv's lower-is-better
    assert not hasattr(bench.E2EIteration.track_exposed_replay_wait_ms, "direction")


def test_skip_all_is_a_reason_in_setup():
    cache = {"skip_all": "e2e iteration needs a CUDA device for the learner; none visible (nvidia-smi)"}
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        bench.E2EIteration().setup(cache, "g1_walk_flat", "gpu-fused", "one_tick")


def test_cache_maps_measured_and_skipped_points(monkeypatch, fake_collector):
    monkeypatch.setattr(bench, "_skip_all_reason", lambda: None)  # measure on the CPU learner
    monkeypatch.setattr(bench, "_placements", lambda: ["host", "gpu"])
    cache = bench.measure_all(tasks=("g1_walk_flat",), iterations=2, warmup=0, overrides=TINY,
                              threads=1)
    b = bench.E2EIteration()
    b.setup(cache, "g1_walk_flat", "host", "one_tick")
    assert len(b.track_iteration_ms(cache, "g1_walk_flat", "host", "one_tick")["samples"]) == 2
    assert all(v > 0 for v in b.track_env_steps_per_s(cache, "g1_walk_flat", "host", "none")["samples"])
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        b.setup(cache, "g1_walk_flat", "gpu", "none")


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
