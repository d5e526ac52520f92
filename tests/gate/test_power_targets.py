"""The power study's injection targets (rlperf.gate.power.targets): each anchor found once in today's file,
the injected code leaves every result bit-identical, the null edit is one comment, a bad --target is exit 2."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from rlperf.cli import main as rlperf_main
from rlperf.errors import UsageError
from rlperf.gate.power import injection
from rlperf.gate.power.targets import TARGETS, chain, target

ROOT = Path(__file__).resolve().parents[2]


def _variant(tmp_path, name: str, steps: int):
    """The target's file with `steps` injected, imported as a module of its own (compiled on first call)."""
    folder = tmp_path / "variants"
    folder.mkdir(exist_ok=True)
    what = TARGETS[name]
    modules = injection.write_variants(str(folder), (ROOT / what.path).read_text(), [steps], what)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(modules[steps])
    finally:
        sys.path.remove(str(folder))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_target_finds_its_anchors_once_and_its_null_edit_is_one_comment(name):
    what = TARGETS[name]
    source = (ROOT / what.path).read_text()
    injected = what.inject(source, 7)
    compile(injected, what.path, "exec")
    assert injected.count(chain.MARK) == 1 and "7" in injected.split(chain.MARK)[0].splitlines()[-1]
    null = what.null_edit(source)
    added = [line for line in null.splitlines() if line not in source.splitlines()]
    assert [line.strip() for line in added] == [chain.NULL] and len(null.splitlines()) == len(source.splitlines()) + 1
    with pytest.raises(UsageError, match=re.escape(what.path)):
        what.inject("no anchors here", 7)
    with pytest.raises(UsageError, match=re.escape(what.path)):
        what.inject(source + source, 7)  # found twice is not once


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_targets_bench_selects_the_point_it_names_as_injected(name):
    """The default --bench is one suite point (or walk's four) and --injected picks the slowed one from it."""
    what = TARGETS[name]
    points = {"walk": "bench_env.EnvFused.time_fused('g1_walk_flat', 8192, 1)",
              "gpu-fused": "bench_replay.ReplayGpuSample.track_ms(20, 'gpu-fused', 1)",
              "motion-tracking": "bench_env.EnvFused.time_fused('g1_motion_tracking', 32768, 2)",
              "replay-host": "bench_replay.ReplayCpuSample.track_ms(20, 'host', 1)",
              "noise": "bench_noise.NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)"}
    assert re.search(what.bench, points[name]) and re.search(what.injected, points[name])
    assert not re.search(what.bench, points[name].replace("1)", "4)").replace("2)", "4)"))  # one thread count


@pytest.mark.slow
def test_the_noise_injection_leaves_every_value_bit_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    from rlperf.envs.noise import counter
    from rlperf.envs.noise.cases import PROFILES

    scales = PROFILES["g1_motion_tracking"].scales()
    want, got, short = (np.zeros((40, scales.size), dtype=np.float32) for _ in range(3))
    counter.fill_uniform(np.uint64(3), np.uint64(5), scales, want)
    variant = _variant(tmp_path, "noise", 16)
    variant.fill_uniform(np.uint64(3), np.uint64(5), scales, got)  # 16 of 40 rows passed over again
    assert want.tobytes() == got.tobytes() and np.abs(want).max() > 0
    variant2 = _variant(tmp_path, "noise", 100)  # more steps than rows: bounded by the rows
    variant2.fill_uniform(np.uint64(3), np.uint64(5), scales, short)
    assert want.tobytes() == short.tobytes()


def test_the_replay_host_injection_leaves_the_gathered_batch_bit_identical(tmp_path):
    import torch

    from rlperf.replay.build import build_placement
    from rlperf.replay.cases import DEFAULT_SIM, DEFAULT_TASK, ReplayCase, min_capacity_rows

    case = ReplayCase(DEFAULT_TASK, DEFAULT_SIM, "host", 2**20, 1)
    placement = build_placement(case.spec, case.workload, 2 * min_capacity_rows(case.workload), device=None,
                                threads=1, seed=7)
    placement.setup()
    original = placement.cpu_sample().clone()
    placement.sampler.sample = lambda storage, idx: idx  # keep the same indices for the variant's call
    variant = _variant(tmp_path, "replay-host", 4096)
    got = variant.HostReplay.cpu_sample(placement)
    assert torch.equal(got.view(torch.int32), original.view(torch.int32))
    placement.__class__ = variant.HostReplay
    del placement.sampler.sample
    placement.verify()  # a fresh batch through the injected code still holds the rows its indices name


@pytest.mark.slow
def test_the_motion_tracking_injection_leaves_every_output_bit_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    from rlperf.envs.motion_tracking import WORKLOAD
    from rlperf.envs.motion_tracking.fused import kernel_args, update_state_kernel

    def outputs(kernel):
        inputs = WORKLOAD.make_inputs(96, WORKLOAD.default_profile, seed=1, noise_level=1.0)
        kernel(*kernel_args(inputs))
        return [np.asarray(a).tobytes() for a in (inputs.reward, inputs.terminated, inputs.actor_obs,
                                                   inputs.critic_obs, inputs.logs)]

    variant = _variant(tmp_path, "motion-tracking", 5)
    assert outputs(variant.update_state_kernel) == outputs(update_state_kernel)


def test_a_bad_target_names_the_valid_ones_and_exits_2(tmp_path, capsys):
    with pytest.raises(UsageError, match="valid targets: gpu-fused, motion-tracking, noise, replay-host, walk"):
        target("nope")
    code = rlperf_main(["gate-power", "study", "--target", "nope", "--dry-run", "--out-json", str(tmp_path / "p.json"),
                        "--out-md", str(tmp_path / "p.md")])
    assert code == 2 and "motion-tracking" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_gpu_fused_alone_needs_steps_and_the_others_calibrate(tmp_path):
    argv = ["gate-power", "study", "--out-json", str(tmp_path / "p.json"), "--out-md", str(tmp_path / "p.md")]
    assert rlperf_main([*argv, "--target", "gpu-fused"]) == 2
    assert [n for n, t in sorted(TARGETS.items()) if not t.candidates] == ["gpu-fused"]


def test_a_dry_run_commits_the_targets_arms_in_the_clone(tmp_path):
    import json

    out = tmp_path / "power.json"
    assert rlperf_main(["gate-power", "study", "--repo", str(ROOT), "--target", "noise", "--dry-run", "--sizes",
                        "0.05,0.1", "--out-json", str(out), "--out-md", str(tmp_path / "power.md")]) == 0
    doc = json.loads(out.read_text())
    assert [a["arm"] for a in doc["plan"]] == ["null", "inject-5%", "inject-10%"]
    assert doc["bench"] == TARGETS["noise"].bench and doc["calibration"]["target"] == "noise"


def test_headline_rows_take_the_k1_cell_the_achieved_step_and_the_nulls_false_alarms(tmp_path, capsys):
    """docs/gate.md's power table rows come from a paired study's power.json, never typed."""
    import json

    from rlperf.gate.power.tables import headline_rows, wilson

    def row(arm, confirm, screen, hits, n, fa, ratio):
        return {"arm": arm, "factor": 1.05, "confirm": confirm, "screen": screen, "k": 0,
                "achieved_median_ratio": ratio,
                "detection": None if arm == "null" else {"hits": hits, "n": n, "rate": hits / n,
                                                         "wilson95": wilson(hits, n)},
                "false_alarms_per_point": {"hits": fa, "n": 30, "rate": fa / 30, "wilson95": wilson(fa, 30)}}

    doc = {"paired_seconds": 3.0, "restarts_per_trial": 1, "trials_per_block": 30, "machine": "gate-power",
           "bench": r"NoiseGeneration\.track_ms\('counter-numba', 'uniform', 32768, 1\)",
           "host": {"cpu": "AMD EPYC", "cores_usable": 1, "name": "cpu-2vcpu-amd-epyc", "cpu_flags_sha256": "abc",
                    "started": "2026-12-04T06:10:00Z"},
           "plan": [{"arm": "null", "size": 0.0, "steps": 0}, {"arm": "inject-10%", "size": 0.1, "steps": 6144}],
           "arms": [row("null", 0, 1.0, 0, 0, 2, None), row("null", 1, 0.6, 0, 0, 1, None),
                    row("inject-10%", 0, 1.0, 28, 30, 0, 1.097), row("inject-10%", 1, 0.6, 29, 30, 0, 1.099)],
           "sessions": [{"arm": "null", "median_pass_ratio": {"p": 1.0}},
                        {"arm": "inject-10%", "median_pass_ratio": {"p": 1.1}}]}
    (got,) = headline_rows(doc, "power-families/noise/", 1.05)
    assert got[1] == "`NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)`"
    assert got[4] == "x1.097 (nominal 10%, 6144 steps)"  # the step before any confirming round
    assert got[5].startswith("96.7% (29/30;") and got[6].startswith("3.3% (1/30;")  # the K 1 cells
    assert "cpu-2vcpu-amd-epyc" in got[0] and "2026-12-04" in got[0] and "screen 0.6" in got[2]
    path = tmp_path / "power.json"
    path.write_text(json.dumps(doc))
    assert rlperf_main(["gate-power", "headline", str(path), "--relative-to", str(tmp_path.parent)]) == 0
    assert "96.7% (29/30;" in capsys.readouterr().out
    assert rlperf_main(["gate-power", "headline", str(path), "--factors", "1.5"]) == 2  # no such cell: exit 2
    doc["sessions"] = [{"arm": "null", "median_pass_ratio": {}}, {"arm": "inject-10%", "median_pass_ratio": {"p": 1.1}}]
    (got,) = headline_rows(doc, "f/", 1.05)
    assert got[6] == "n/a"  # a null session without pairs has no paired false alarms to show
    doc["sessions"][1]["median_pass_ratio"] = {}
    assert headline_rows(doc, "f/", 1.05) == []  # nor an injected arm without pairs any detection


def test_headline_takes_the_null_from_a_null_only_study_of_the_same_point_only(tmp_path):
    from rlperf.gate.power.tables import headline_rows, wilson

    def doc(bench, fa):
        cell = {"hits": fa, "n": 30, "rate": fa / 30, "wilson95": wilson(fa, 30)}
        det = {"hits": 30, "n": 30, "rate": 1.0, "wilson95": wilson(30, 30)}
        rows = [{"arm": a, "factor": 1.05, "confirm": c, "screen": sc, "achieved_median_ratio": 1.1,
                 "detection": det, "false_alarms_per_point": cell} for a in ("null", "inject-10%")
                for c, sc in ((0, 1.0), (1, 0.6))]
        return {"paired_seconds": 12.0, "restarts_per_trial": 1, "trials_per_block": 30, "machine": "m",
                "bench": bench, "plan": [{"arm": "null", "size": 0.0, "steps": 0},
                                         {"arm": "inject-10%", "size": 0.1, "steps": 9}], "arms": rows,
                "sessions": [{"arm": a, "median_pass_ratio": {"p": 1.0}} for a in ("null", "inject-10%")]}

    (got,) = headline_rows(doc("b", 0), "inj/", 1.05, null_doc=doc("b", 2), null_folder="null/")
    assert got[6].startswith("6.7% (2/30;") and got[7] == "`inj/, null: null/`"
    with pytest.raises(ValueError, match="null study measured"):
        headline_rows(doc("b", 0), "inj/", 1.05, null_doc=doc("other", 2))


def test_a_paired_session_without_pairs_is_named_so_its_trials_are_left_out(tmp_path):
    """The gate judges a point whose paired sampling gave no pairs on its one asv pass: 30 'trials' would be
    one number 30 times. judge_sessions leaves such a session out (sessions._unpaired names its points)."""
    from rlperf.gate import paired
    from rlperf.gate.power.sessions import _unpaired

    spec = paired.PairedSpec(seconds=1.0)
    paired.save(str(tmp_path / "paired.json"), [paired.PointPairs(name="a", pairs=[(1.0, 1.0)]),
                                                paired.PointPairs(name="b", skipped="one call takes 0.9 s")], spec)
    assert _unpaired(str(tmp_path)) == ["b"]
    assert _unpaired(str(tmp_path / "none")) == ["every point (no paired.json)"]
