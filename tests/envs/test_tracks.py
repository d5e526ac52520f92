"""The env suite's tracks carry samples, so the gate judges them with statistics, not on one number."""

from __future__ import annotations

import pytest

from rlperf.envs import cases

bench_env = pytest.importorskip("benchmarks.bench_env")


def test_speedup_is_one_ratio_per_adjacent_pair_of_calls():
    bench = bench_env.EnvSpeedup()
    bench.setup("probe", 512, 1)
    out = bench.track_speedup_vs_numpy("probe", 512, 1)
    assert out["number"] == 1 and len(out["samples"]) == cases.asv_sweep().iters
    assert all(r > 0 for r in out["samples"])
    assert bench_env.EnvSpeedup.track_speedup_vs_numpy.direction == "higher"


def _fake_child(source: str, seen: list):
    import os
    import subprocess

    def run(cmd, env, **kw):
        cache = env["NUMBA_CACHE_DIR"]
        seen.append((os.path.isdir(cache) and not os.listdir(cache), cmd[-1]))
        return subprocess.CompletedProcess(cmd, 0, stdout=f'{{"compile_ms": 4321.0, "source": "{source}"}}\n',
                                           stderr="")
    return run


def test_a_compile_sample_runs_in_a_child_with_an_empty_numba_cache(monkeypatch):
    import subprocess

    seen = []
    monkeypatch.setattr(subprocess, "run", _fake_child("compiled", seen))
    assert bench_env.fresh_compile_ms("probe") == 4321.0
    assert seen == [(True, "probe")]


def test_a_cache_hit_is_refused_not_reported_as_a_compile(monkeypatch):
    import subprocess

    monkeypatch.setattr(subprocess, "run", _fake_child("cache", []))
    with pytest.raises(RuntimeError, match="not a compile"):
        bench_env.fresh_compile_ms("probe")
    assert bench_env.COMPILE_SAMPLES >= 3
