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


@pytest.mark.parametrize("task", ["probe", "g1_motion_tracking"])
def test_task_aware_overhead_measure_reports_both_ratios(task):
    from rlperf.envs import noise_overhead

    r = noise_overhead.measure(64, 1, task=task, rounds=2, warmup=0)
    assert r["task"] == task and set(r["min_ms"]) == set(noise_overhead.ARMS) and r["overhead_ratio"] > 0
    # the whole-step ratio is always there, from the same minima (the draws-only one may be None)
    assert r["numpy_path_over_in_kernel"] == noise_overhead.numpy_path_over_in_kernel(r["min_ms"]) > 0


def test_noise_overhead_command_rejects_bad_input_naming_the_tasks(capsys):
    from rlperf.cli import main
    from rlperf.envs import noise_overhead

    for bad in ([], ["--task", "walk"], ["--num-envs", "x"]):
        with pytest.raises(SystemExit) as exc:
            main(["noise-overhead", *bad])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        if "--num-envs" not in bad:
            assert "probe" in err and "g1_motion_tracking" in err, err
    for bad, message in ((["--threads", "0"], "--threads: 0 must be >= 1"), (["--rounds", "-1"], "--rounds: -1"),
                         (["--threads", "100000"], "exceeds this machine's")):
        assert main(["noise-overhead", "--task", "probe", *bad]) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="g1_motion_tracking"):
        noise_overhead.measure(8, 1, task="walk")


def test_noise_overhead_command_prints_one_json_object_with_both_ratios(capsys):
    import json

    from rlperf.cli import main
    from rlperf.envs import noise_overhead

    assert main(["noise-overhead", "--task", "probe", "--num-envs", "64", "--rounds", "1"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["task"] == "probe" and set(r["min_ms"]) == set(noise_overhead.ARMS) and r["overhead_ratio"] > 0
    assert r["numpy_path_over_in_kernel"] > 0
