"""SAC statistics from the bf16 compact layout track the fp32 packed ones on identical indices (issue 11
section 3), inside the stated bound; a batch with a wrong field fails the same check."""

from __future__ import annotations

import pytest
import torch

from rlperf.e2e.consistency import ACCEPT_REL, QUANTITIES, check, relative_difference
from rlperf.e2e.learner.config import learner_config
from rlperf.workload import compose

OVERRIDES = ["algo.num_envs=16", "algo.replay_buffer_n=8", "algo.batch_size=32", "algo.actor_hidden_dim=16",
             "algo.critic_hidden_dim=16", "algo.num_atoms=11", "algo.use_compile=false", "training.use_amp=false"]
UPDATES = 12


@pytest.fixture(scope="module")
def setup():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    wl = compose("g1_motion_tracking", "mujoco", OVERRIDES)
    yield wl, learner_config("g1_motion_tracking", "mujoco", OVERRIDES, workload=wl)
    torch.set_num_threads(before)


def test_bf16_compact_statistics_stay_inside_the_bound(setup):
    wl, cfg = setup
    report = check(cfg, wl, updates=UPDATES)
    for q in QUANTITIES:
        a, b = (report["trajectories"][name][q] for name in report["layouts"])
        assert len(a) == len(b) > 0 and a != b  # bf16 rounding is visible, not zero
    assert report["ok"], report["relative_difference"]
    assert max(report["relative_difference"].values()) <= ACCEPT_REL


def test_a_corrupted_batch_fails_the_check(setup):
    wl, cfg = setup

    def misaligned_next_obs(b):  # what an elision bug looks like: next_obs of another row
        return b._replace(next_obs=b.next_obs.roll(1, 0), next_critic=b.next_critic.roll(1, 0),
                          rewards=b.rewards.roll(1, 0))

    report = check(cfg, wl, updates=UPDATES, corrupt=misaligned_next_obs)
    assert not report["ok"], report["relative_difference"]


def test_relative_difference_is_scaled_by_the_trajectory():
    assert relative_difference([1.0, -1.0], [1.0, -1.0]) == 0.0
    assert relative_difference([2.0, -2.0], [2.0, -1.0]) == pytest.approx(0.5)
    assert relative_difference([], []) == 0.0


def test_the_command_rejects_bad_input_before_training(capsys):
    from rlperf.cli import main

    for bad, message in ((["--updates", "0"], "--updates: 0 must be >= 1"), (["--bound", "0"], "--bound"),
                         (["--task", "nope"], "g1_motion_tracking")):
        assert main(["e2e-consistency", *bad]) == 2
        assert message in capsys.readouterr().err


def test_the_command_prints_the_judgement_and_exits_by_it(setup, capsys):
    import json

    from rlperf.cli import main

    code = main(["e2e-consistency", "--updates", "3", *OVERRIDES])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["ok"] else 1) and report["updates"] == 3 and "trajectories" not in report
    assert report["bound"] == ACCEPT_REL and set(report["relative_difference"]) == set(QUANTITIES)
