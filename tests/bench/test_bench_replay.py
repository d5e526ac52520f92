"""Replay placements under pytest-benchmark: the inner loop on the cases of rlperf.replay.cases.

`pytest tests/bench --benchmark-only --benchmark-enable` times a quick subset (one small capacity,
every placement, 1 GPU); in the normal test run each body runs once as a test (--benchmark-disable).
Infeasible points skip with the registry's reason, exactly as asv shows them n/a.
"""

from __future__ import annotations

import pytest

cases = pytest.importorskip("rlperf.replay.cases", reason="replay case registry not available yet")
run = pytest.importorskip("rlperf.replay.run", reason="replay runner not available yet")
build_placement = pytest.importorskip("rlperf.replay.build").build_placement

# A capacity small enough for a laptop; the registry's own quick capacity wins once it defines one.
CAPACITY_ROWS = getattr(cases, "QUICK_CAPACITY_ROWS", 2**16)
CASES = cases.iter_cases(capacity_rows=[CAPACITY_ROWS], gpu_counts=(1,))


@pytest.fixture(scope="module")
def resources():
    return cases.Resources.probe()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_bench_replay_sample(benchmark, resources, case):
    verdict = cases.feasibility(case, resources)
    if not verdict.ok:
        pytest.skip(verdict.reason)
    placement = build_placement(case.spec, case.workload, case.capacity_rows, device=run.learner_device(),
                                threads=1, seed=12345)
    try:
        placement.setup()
        placement.verify()
        benchmark.group = f"replay sample, {CAPACITY_ROWS:,} rows"
        benchmark(placement.sample)
    except NotImplementedError as exc:
        pytest.skip(str(exc))
    finally:
        del placement


def test_the_asv_classes_skip_with_the_guards_reason_before_building_anything(monkeypatch):
    """bench_replay's two setups share one feasibility walk: no CUDA skips a device-timed point, an
    infeasible capacity skips with the guard's bytes; neither builds a placement."""
    from benchmarks import bench_replay

    monkeypatch.setattr(bench_replay, "build", lambda *a, **k: pytest.fail("built an infeasible point"))
    monkeypatch.setattr(cases.Resources, "probe_cheap", classmethod(lambda cls: cases.Resources(
        cuda_devices=0, device_free_bytes=0, host_available_bytes=2**40)))
    with pytest.raises(NotImplementedError, match="CUDA device"):
        bench_replay.ReplayGpuSample().setup(20, "gpu", 1)
    monkeypatch.setattr(cases.Resources, "probe_cheap", classmethod(lambda cls: cases.Resources(
        cuda_devices=0, device_free_bytes=0, host_available_bytes=2**20)))
    with pytest.raises(NotImplementedError, match="host"):
        bench_replay.ReplayPeakMemory().setup(20, "host")
    with pytest.raises(NotImplementedError, match="host"):
        bench_replay.ReplayCpuSample().setup(20, "host", 1)
