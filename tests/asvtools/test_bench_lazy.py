"""A point shared by several asv tracks is measured once, on first use, under its lock (benchmarks/_lazy.py),
and E2EIteration measures only the points whose tracks run."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

import benchmarks.bench_e2e as bench
from benchmarks import _lazy

KEY = ("g1_motion_tracking", "host", "none")
SAMPLES = {"iteration_ms": [4.0, 5.0], "exposed_replay_wait_ms": [1.0, 1.5], "env_steps_per_s": [9.0, 8.0]}


def test_a_point_is_measured_once_and_read_back(tmp_path):
    calls = []
    first = _lazy.measured_once(str(tmp_path), KEY, lambda: calls.append(1) or {"v": [1.0]})
    again = _lazy.measured_once(str(tmp_path), KEY, lambda: pytest.fail("measured twice"))
    assert first == again == {"v": [1.0]} and calls == [1]
    name = os.path.basename(_lazy.point_path(str(tmp_path), KEY))
    assert sorted(os.listdir(tmp_path)) == [name, name + ".lock"]  # no temporary file left behind


def test_point_files_are_safe_names_and_distinct(tmp_path):
    a = _lazy.point_path(str(tmp_path), ("t", "gpu/fused", "one tick"))
    b = _lazy.point_path(str(tmp_path), ("t", "gpu-fused", "one_tick"))
    assert os.path.dirname(a) == str(tmp_path) and "/" not in os.path.basename(a) and " " not in a
    assert a != _lazy.point_path(str(tmp_path), ("t", "gpu", "one_tick")) and b.endswith("t--gpu-fused--one_tick.json")


def _track(folder, log, out):
    def measure():
        with open(log, "a") as fh:
            fh.write("measured\n")
        time.sleep(0.3)  # the other processes reach the lock while this one measures
        return {"pid": os.getpid()}

    out.put(_lazy.measured_once(folder, KEY, measure)["pid"])


def test_processes_that_start_together_share_one_measurement(tmp_path):
    ctx = multiprocessing.get_context("fork")
    out, log = ctx.Queue(), str(tmp_path / "log")
    procs = [ctx.Process(target=_track, args=(str(tmp_path), log, out)) for _ in range(3)]
    for p in procs:
        p.start()
    pids = [out.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert open(log).read() == "measured\n"
    assert len(set(pids)) == 1 and pids[0] in {p.pid for p in procs}


def test_a_failed_measurement_fails_the_other_tracks_without_measuring_again(tmp_path):
    def boom():
        raise ValueError("CUDA out of memory")

    with pytest.raises(ValueError, match="out of memory"):
        _lazy.measured_once(str(tmp_path), KEY, boom)
    with pytest.raises(RuntimeError, match="failed in an earlier track.*ValueError: CUDA out of memory"):
        _lazy.measured_once(str(tmp_path), KEY, lambda: pytest.fail("measured again"))


def test_fresh_folders_are_new_and_under_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b = _lazy.fresh_folder("e2e"), _lazy.fresh_folder("e2e")
    assert a != b and os.path.dirname(a) == str(tmp_path) and os.listdir(a) == []


@pytest.fixture
def cuda_host(monkeypatch, tmp_path):
    """A host where E2EIteration would measure: no skip reason, the measurement replaced by a counting fake."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bench, "_skip_all_reason", lambda: None)
    calls = []

    def fake(task, placement, prefetch):
        calls.append((task, placement, prefetch))
        return {"skip": "placement 'gpu' needs 9 GiB, 1 GiB free"} if placement == "gpu" else SAMPLES

    monkeypatch.setattr(bench, "measure_point", fake)
    return calls


def test_the_three_tracks_of_a_point_share_one_measurement(cuda_host):
    cache = bench.E2EIteration().setup_cache()
    got = {}
    for track in ("track_env_steps_per_s", "track_exposed_replay_wait_ms", "track_iteration_ms"):
        b = bench.E2EIteration()  # asv: a process, so an instance, per track
        b.setup(cache, *KEY)
        got[track] = getattr(b, track)(cache, *KEY)["samples"]
    assert cuda_host == [KEY]
    assert got == {"track_env_steps_per_s": SAMPLES["env_steps_per_s"],
                   "track_exposed_replay_wait_ms": SAMPLES["exposed_replay_wait_ms"],
                   "track_iteration_ms": SAMPLES["iteration_ms"]}


def test_unselected_points_are_never_measured(cuda_host):
    cache = bench.E2EIteration().setup_cache()
    assert cuda_host == [] and os.listdir(cache["folder"]) == []  # setup_cache measures nothing
    bench.E2EIteration().setup(cache, "g1_walk_flat", "uva", "one_tick")
    assert cuda_host == [("g1_walk_flat", "uva", "one_tick")]
    assert [f for f in os.listdir(cache["folder"]) if f.endswith(".json")] == ["g1_walk_flat--uva--one_tick.json"]


def test_a_skipped_point_skips_every_track_with_its_reason_measured_once(cuda_host):
    cache = bench.E2EIteration().setup_cache()
    for _ in range(3):
        with pytest.raises(NotImplementedError, match="needs 9 GiB, 1 GiB free"):
            bench.E2EIteration().setup(cache, "g1_motion_tracking", "gpu", "none")
    assert cuda_host == [("g1_motion_tracking", "gpu", "none")]


def test_without_cuda_every_point_skips_with_the_reason_and_nothing_is_measured(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("rlperf.measure.guards.nvidia_smi_free_bytes", lambda: [])
    monkeypatch.setattr(bench, "measure_point", lambda *a: pytest.fail("measured without CUDA"))
    cache = bench.E2EIteration().setup_cache()
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        bench.E2EIteration().setup(cache, *KEY)
