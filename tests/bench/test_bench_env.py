"""Env update_state kernels under pytest-benchmark: numpy reference and fused kernel, quick sweep.

The points come from rlperf.envs.cases.QUICK (the registry's quick subset); thread counts above what
this machine allows skip with the registry's reason. Kernels compile once per task, outside timing.
"""

from __future__ import annotations

import pytest

cases = pytest.importorskip("rlperf.envs.cases", reason="env case registry not available yet")
harness = pytest.importorskip("rlperf.envs.harness", reason="env harness not available yet")
registry = pytest.importorskip("rlperf.envs.registry", reason="env registry not available yet")
pools = pytest.importorskip("rlperf.envs.threads", reason="env thread pools not available yet")

QUICK = cases.QUICK
POINTS = [(task, n) for task in registry.TASKS for n in QUICK.num_envs]
FUSED_POINTS = [(task, n, t) for task, n in POINTS for t in QUICK.threads]


@pytest.fixture(scope="module")
def prepared():
    """task -> compiled workload (compile time is the asv suite's track_compile_ms, never timed here)."""
    cache: dict = {}

    def get(task):
        if task not in cache:
            cache[task] = harness.prepare(task)
        return cache[task]

    return get


def _inputs(workload, num_envs):
    return workload.make_inputs(num_envs, registry.default_profile(workload), seed=cases.SEED)


@pytest.mark.parametrize("task, num_envs", POINTS)
def test_bench_env_reference(benchmark, prepared, task, num_envs):
    workload = prepared(task).workload
    inputs = _inputs(workload, num_envs)
    benchmark.group = f"env {task} {num_envs} envs"
    benchmark(workload.reference, inputs)


@pytest.mark.parametrize("task, num_envs, threads", FUSED_POINTS)
def test_bench_env_fused(benchmark, prepared, task, num_envs, threads):
    reason = cases.skip_reason(threads, pools.max_numba_threads())
    if reason:
        pytest.skip(reason)
    workload = prepared(task).workload
    call = workload.fused_runner(_inputs(workload, num_envs), threads)
    call()  # pool start-up at this thread count, untimed
    benchmark.group = f"env {task} {num_envs} envs"
    benchmark(call)
