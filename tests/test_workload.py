"""The workload model reproduces the spec's numbers exactly and rejects bad input with exit code 2."""

import json

import pytest

from rlperf.cli import main
from rlperf.errors import UsageError
from rlperf.workload import available_tasks, compose


def test_motion_tracking_motrix_matches_the_spec_exactly():
    wl = compose("g1_motion_tracking", "motrix")
    assert (wl.obs_dim, wl.action_dim, wl.critic_dim) == (160, 29, 289)
    assert wl.row_floats == 930 and wl.row_bytes == 3720
    assert wl.capacity_rows == 1_048_576 and wl.replay_bytes == 3_900_702_720
    assert (wl.add_rows, wl.add_bytes) == (2048, 7_618_560)
    assert (wl.learning_start_rows, wl.learning_start_bytes, wl.learning_start_chunks) == (8192, 30_474_240, 4)
    assert (wl.sample_rows_per_rank, wl.sample_bytes_per_rank) == (32_768, 121_896_960)
    assert wl.sample_new_ratio_per_rank == 16
    assert [wl.with_gpus(n).global_sample_new_ratio for n in (2, 4, 8)] == [32, 64, 128]


@pytest.mark.parametrize("sim, sample_rows, learning_start, ratio", [
    ("mujoco", 32_768, 20_480, 16),   # symmetry halves the batch, 8 updates
    ("motrix", 65_536, 8_192, 32),
])
def test_walk_flat_follows_symmetry_and_learning_starts(sim, sample_rows, learning_start, ratio):
    wl = compose("g1_walk_flat", sim)
    assert wl.row_bytes == 1720
    assert wl.sample_rows_per_rank == sample_rows
    assert wl.sample_bytes_per_rank == sample_rows * 1720
    assert wl.learning_start_rows == learning_start
    assert wl.sample_new_ratio_per_rank == ratio


def test_hydra_overrides_change_every_derived_number_consistently():
    wl = compose("g1_motion_tracking", "motrix", ["algo.num_envs=4096"])
    assert wl.capacity_rows == 4096 * 512
    assert wl.add_bytes == 4096 * 3720
    assert wl.sample_new_ratio_per_rank == 8
    assert wl.learning_start_chunks == 2
    assert compose("g1_motion_tracking", "motrix", ["algo.updates_per_step=2"]).sample_rows_per_rank == 16_384


def test_the_packaged_configs_list_both_tasks_and_sims():
    assert available_tasks() == {"g1_motion_tracking": ("motrix", "mujoco"), "g1_walk_flat": ("motrix", "mujoco")}


@pytest.mark.parametrize("task, sim, overrides, words", [
    ("g1_nope", "motrix", [], ["unknown task", "g1_motion_tracking", "g1_walk_flat"]),
    ("g1_walk_flat", "isaac", [], ["unknown sim", "motrix", "mujoco"]),
    ("g1_walk_flat", "motrix", ["algo.not_a_key=1"], ["algo.not_a_key"]),
    ("g1_walk_flat", "motrix", ["algo.num_envs=0"], ["num_envs", "positive"]),
])
def test_bad_inputs_raise_usage_errors_naming_the_problem(task, sim, overrides, words):
    with pytest.raises(UsageError) as err:
        compose(task, sim, overrides)
    for word in words:
        assert word in str(err.value)


def test_workload_cli_prints_the_required_json_keys(capsys):
    assert main(["workload", "--task", "g1_motion_tracking", "--sim", "motrix", "--gpus", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    required = ("obs_dim action_dim critic_dim row_floats row_bytes capacity_rows replay_bytes add_rows "
                "add_bytes learning_start_rows learning_start_bytes sample_rows_per_rank sample_bytes_per_rank "
                "sample_new_ratio_per_rank global_sample_new_ratio").split()
    assert set(required) <= set(doc)
    assert doc["global_sample_new_ratio"] == 64 and doc["replay_bytes"] == 3_900_702_720


def test_workload_cli_exits_2_on_an_unknown_task(capsys):
    assert main(["workload", "--task", "nope"]) == 2
    assert "valid: g1_motion_tracking, g1_walk_flat" in capsys.readouterr().err


@pytest.mark.parametrize("override, message", [
    ("=5", "Hydra override '=5' names no key; write KEY=VALUE, e.g. algo.num_envs=4096"),
    ("algo=5", "bad Hydra override"),
    ("algo.x=[1,", "bad Hydra override syntax"),
    ("~algo.num_envs", "left the config without a key the workload needs ('algo.num_envs')"),
    ("algo.num_envs=1.5", "algo.num_envs must be an integer, got 1.5 (float)"),
    ("algo.num_envs=true", "algo.num_envs must be an integer, got True (bool)"),
    ("algo.batch_size=2e4", "algo.batch_size must be an integer"),
])
def test_bad_overrides_exit_2_with_the_reason_and_an_example(capsys, override, message):
    assert main(["workload", override]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_with_envs_equals_composing_the_env_count_and_refuses_bad_counts():
    base = compose("g1_motion_tracking", "motrix")
    assert base.with_envs(4096) == compose("g1_motion_tracking", "motrix", ["algo.num_envs=4096"])
    assert base.with_envs(4096).capacity_rows == 4096 * base.replay_buffer_n
    for bad in (0, -1, 1.5, True):
        with pytest.raises(UsageError, match="num_envs must be a positive integer"):
            base.with_envs(bad)
