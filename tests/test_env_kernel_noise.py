"""The probe with in-kernel counter-based noise: numpy oracle parity and thread-count independence."""

import numpy as np
import pytest

from rlperf.envs import parity
from rlperf.envs.probe import WORKLOAD as PROBE
from rlperf.envs.probe.fused_noise import WORKLOAD as DRAWN
from rlperf.envs.probe.fused_noise import noise_scales, oracle_noise

N = 257


@pytest.fixture(scope="module")
def inp():
    return DRAWN.make_inputs(N, "default", seed=3, step=7)


def test_oracle_noise_is_uniform_scaled_by_the_probe_sigma():
    draws = oracle_noise(20000, 1, 2)
    assert draws.dtype == np.float32
    bound = noise_scales()
    assert np.all(np.abs(draws) < bound) and abs(draws[:, 35:].std() - 1.5 / np.sqrt(3)) < 0.02


def test_in_kernel_noise_matches_the_numpy_oracle_fed_the_same_draws(inp):
    got = DRAWN.fused_runner(inp, 2)()
    result = parity.compare(PROBE.reference(inp), got, PROBE.tolerances)
    assert result.ok, result.failures
    assert np.any(got.actor_obs[:, :64] != got.critic_obs[:, :64])  # noise did reach the obs


def test_in_kernel_noise_outputs_are_identical_for_one_and_two_threads(inp):
    one, two = (DRAWN.fused_runner(inp, t)() for t in (1, 2))  # separate output buffers per runner
    for k in ("reward", "terminated", "actor_obs", "critic_obs"):
        assert np.array_equal(getattr(one, k), getattr(two, k)), k
    assert one.term_logs == two.term_logs


def test_another_step_draws_other_noise(inp):
    a = DRAWN.fused_runner(inp, 1)().actor_obs.copy()
    other = DRAWN.make_inputs(N, "default", seed=3, step=8)
    assert not np.array_equal(a, DRAWN.fused_runner(other, 1)().actor_obs)


def test_probe_overhead_shorthand_reports_both_ratios_and_rejects_bad_input():
    from rlperf.envs.probe import noise_overhead

    r = noise_overhead.measure(64, 1, rounds=2, warmup=0)
    assert r["task"] == "probe" and set(r["min_ms"]) == set(noise_overhead.ARMS) and r["overhead_ratio"] > 0
    for bad in (["--threads", "0"], ["--num-envs", "x"], ["--rounds", "-1"], ["--task", "probe"]):
        with pytest.raises(SystemExit) as exc:
            noise_overhead.main(bad)
        assert exc.value.code == 2


@pytest.mark.parametrize("task", ["probe", "g1_motion_tracking"])
def test_task_aware_overhead_measure_reports_both_ratios(task):
    from rlperf.envs import noise_overhead

    r = noise_overhead.measure(64, 1, task=task, rounds=2, warmup=0)
    assert r["task"] == task and set(r["min_ms"]) == set(noise_overhead.ARMS) and r["overhead_ratio"] > 0


def test_task_aware_overhead_cli_rejects_bad_input_naming_the_tasks(capsys):
    from rlperf.envs import noise_overhead

    for bad in ([], ["--task", "walk"], ["--task", "probe", "--threads", "0"]):
        with pytest.raises(SystemExit) as exc:
            noise_overhead.main(bad)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        if "--task" not in bad or "walk" in bad:
            assert "probe" in err and "g1_motion_tracking" in err, err
    with pytest.raises(ValueError, match="g1_motion_tracking"):
        noise_overhead.measure(8, 1, task="walk")
