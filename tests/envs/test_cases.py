"""The one case registry, the task registry and the thread budget."""

import pytest

from rlperf.envs import cases, registry, threads
from rlperf.errors import UsageError


def test_full_sweep_matches_the_reference_benchmark():
    assert cases.FULL.num_envs == (512, 1024, 2048, 4096, 8192, 16384, 32768)
    assert cases.FULL.threads[:5] == (1, 2, 4, 8, 16)
    assert (cases.FULL.iters, cases.FULL.warmup) == (80, 8)


def test_quick_subset_is_sac_default_two_env_counts_and_two_thread_counts():
    q = cases.QUICK
    assert (q.profiles, q.num_envs, q.threads, q.iters, q.warmup) == (("sac_default",), (512, 2048), (2, 4), 10, 2)


def test_thread_sweep_stops_at_the_machine():
    assert cases.thread_sweep(6) == (1, 2, 4)
    assert cases.skip_reason(4, 2) and "allows 2" in cases.skip_reason(4, 2)
    assert cases.skip_reason(2, 2) is None


def test_cases_run_one_thread_first_for_each_env_count():
    got = cases.enumerate_cases("probe", ["default"], [2048, 512], [2, 1])
    assert [(c.num_envs, c.threads) for c in got] == [(512, 1), (512, 2), (2048, 1), (2048, 2)]
    assert got[0].key == "probe:default:512:1"


def test_asv_classes_take_their_params_from_the_case_registry():
    from benchmarks import bench_env

    p = cases.asv_params()
    assert bench_env.EnvFused.params == (p["task"], p["num_envs"], p["threads"])
    assert bench_env.EnvReference.params == (p["task"], p["num_envs"])


def test_asv_full_sweep_is_opt_in(monkeypatch):
    monkeypatch.delenv("RLPERF_ASV_FULL", raising=False)
    assert cases.asv_sweep() is cases.ASV_SMALL
    monkeypatch.setenv("RLPERF_ASV_FULL", "1")
    assert cases.asv_sweep() is cases.FULL


def test_every_track_benchmark_declares_a_unit_and_the_non_default_directions():
    from benchmarks import bench_env

    for cls in (bench_env.EnvSpeedup, bench_env.EnvCompile, bench_env.EnvParity):
        for name in dir(cls):
            if name.startswith("track_"):
                assert getattr(getattr(cls, name), "unit", None), name
    assert bench_env.EnvSpeedup.track_speedup_vs_numpy.direction == "higher"
    reward = bench_env.EnvParity.track_parity_reward
    from rlperf.envs import tolerances

    # the gate's limit is the derived data file's atol (rtol is 0 there, so it is the same test)
    assert reward.direction == "tolerance"
    assert reward.tolerance["g1_walk_flat"] == tolerances.load("g1_walk_flat").reward_atol
    assert bench_env.EnvParity.track_parity_termination_mismatch.tolerance["probe"] == 0
    assert getattr(bench_env.EnvCompile.track_compile_ms, "direction", "lower") == "lower"


def test_unknown_task_names_the_valid_tasks():
    with pytest.raises(UsageError, match="g1_walk_flat"):
        registry.get("g1_run")


def test_a_missing_workload_package_fails_with_a_clear_message(monkeypatch):
    monkeypatch.setitem(registry.PACKAGES, "g1_motion_tracking", "rlperf.envs.not_there_yet")
    with pytest.raises(UsageError, match="not available"):
        registry.get("g1_motion_tracking")
    assert registry.get("probe").name == "probe"


def test_default_profile_is_sac_default_for_walk_and_the_only_one_for_probe():
    assert registry.default_profile(registry.get("g1_walk_flat")) == "sac_default"
    assert registry.default_profile(registry.get("probe")) == "default"


def test_unknown_profile_names_the_valid_profiles():
    with pytest.raises(UsageError, match="full_supported"):
        registry.check_profiles(registry.get("g1_walk_flat"), ["sac"])


def test_thread_budget_never_exceeds_the_cores():
    budget = threads.apply_budget(1)
    assert budget.numba_threads == 1
    assert budget.numba_threads + budget.torch_threads <= max(budget.cores, 2)
    with pytest.raises(ValueError):
        threads.apply_budget(threads.max_numba_threads() + 1)
