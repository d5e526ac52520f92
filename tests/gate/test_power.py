"""`rlperf gate-power` (rlperf.gate.power) without the experiment: its statistics, its injection, and a dry run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.gate.test_passes import s  # noqa: F401 - the fixture: a repo, a base and a head commit

from rlperf.cli import main as rlperf_main
from rlperf.errors import UsageError
from rlperf.gate.power import chain_timing, injection, sessions, tables
from rlperf.gate.power.targets import gpu_fused, walk
from rlperf.gate.power import trials as cut

ROOT = Path(__file__).resolve().parents[2]


def study(argv) -> int:
    """`rlperf gate-power study ARGV`'s exit code (argparse's own errors exit 2 through SystemExit)."""
    try:
        return rlperf_main(["gate-power", "study", *argv])
    except SystemExit as exc:
        return int(exc.code or 0)


def test_wilson_interval_matches_the_textbook_values():
    lo, hi = tables.wilson(0, 60)
    assert lo == 0.0 and hi == pytest.approx(0.0602, abs=5e-4)
    lo, hi = tables.wilson(47, 65)
    assert lo == pytest.approx(0.6042, abs=1e-3) and hi == pytest.approx(0.8171, abs=1e-3)  # by hand
    assert tables.wilson(0, 0) == (0.0, 1.0)


def test_cv_and_step_calibration():
    assert tables.cv([1.0, 1.0, 1.0]) == 0.0
    assert tables.cv([1.0]) is None
    assert tables.cv([0.9, 1.1]) == pytest.approx(0.1414, abs=1e-3)
    ratios = {"4": {"median": 1.05}, "6": {"median": 1.086}, "7": {"median": 1.139}, "8": {"median": 1.16}}
    assert injection.pick([0.05, 0.10, 0.20], ratios) == {0.05: 4, 0.10: 6, 0.20: 8}


def test_injection_keeps_the_kernel_valid_python_and_multiplies_by_exactly_one():
    source = (ROOT / walk.KERNEL).read_text()
    injected = walk.inject(source, 7)
    compile(injected, "fused.py", "exec")
    assert "range(7)" in injected and "* (1.0 + spin * 0.0)" in injected
    compile(walk.null_edit(source), "fused.py", "exec")
    with pytest.raises(UsageError):
        walk.inject("no anchors here", 7)


def test_summary_counts_detection_and_false_alarms_per_point_and_per_run():
    arms = [{"arm": "null", "size": 0.0, "steps": 0}, {"arm": "inject-10%", "size": 0.10, "steps": 5}]

    def trial(arm, walk, probe):
        return {"arm": arm, "exit_code": 0, "seconds": 100.0, "samples": [20],
                "points": {"f('g1_walk_flat', 1)": {"status": walk, "ratio": 1.1, "base": 1.0},
                           "f('probe', 1)": {"status": probe, "ratio": 1.0, "base": 2.0}}}

    trials = [trial("null", "ok", "ok"), trial("null", "ok", "regression"),
              trial("inject-10%", "regression", "ok"), trial("inject-10%", "ok", "ok")]
    null, inj = tables.summarize(arms, trials, walk.INJECTED)
    assert null["detection"] is None
    assert (null["false_alarms_per_point"]["hits"], null["false_alarms_per_point"]["n"]) == (1, 4)
    assert (null["false_alarms_per_run"]["hits"], null["false_alarms_per_run"]["n"]) == (1, 2)
    assert (inj["detection"]["hits"], inj["detection"]["n"]) == (1, 2)
    assert (inj["false_alarms_per_point"]["hits"], inj["false_alarms_per_point"]["n"]) == (0, 2)
    assert inj["seconds_per_gate_run"] == 100.0 and inj["samples_per_point"] == [20]
    assert "inject-10%" in tables.to_markdown({"command": "c", "machine": "m", "base": "a" * 40, "passes": 3,
                                                   "bench": "b", "injected": "i", "arms": [null, inj]})


def test_dry_run_commits_the_arms_in_a_clone_and_measures_nothing(tmp_path):
    out = tmp_path / "power.json"
    code = study(["--repo", str(ROOT), "--dry-run", "--sizes", "0.1", "--out-json", str(out),
                            "--out-md", str(tmp_path / "power.md")])
    assert code == 0
    doc = json.loads(out.read_text())
    assert [a["arm"] for a in doc["plan"]] == ["null", "inject-10%"] and doc["trials"] == []
    assert all("--run" in a["command"] and "--passes 3" in a["command"] for a in doc["plan"])
    branches = subprocess.run(["git", "-C", str(ROOT), "log", "--all", "--oneline", "--fixed-strings",
                               "--grep", "[gate-power arm]"], capture_output=True, text=True).stdout
    assert branches == ""  # the commits live in the throw-away clone only


def test_no_null_plans_only_the_injected_arms(tmp_path):
    out = tmp_path / "power.json"
    code = study(["--repo", str(ROOT), "--dry-run", "--no-null", "--sizes", "0.05,0.2", "--steps", "3,10",
                            "--out-json", str(out), "--out-md", str(tmp_path / "power.md")])
    assert code == 0
    plan = json.loads(out.read_text())["plan"]
    assert [(a["arm"], a["steps"]) for a in plan] == [("inject-5%", 3), ("inject-20%", 10)]


def test_null_only_plans_the_null_arm_and_calibrates_nothing(tmp_path):
    out = tmp_path / "power.json"
    code = study(["--repo", str(ROOT), "--null-only", "--blocks", "1", "--paired-seconds", "9",
                            "--dry-run", "--out-json", str(out), "--out-md", str(tmp_path / "power.md")])
    assert code == 0
    assert [a["arm"] for a in json.loads(out.read_text())["plan"]] == ["null"]
    gpu = tmp_path / "gpu.json"  # the GPU target's null arm needs no launch count either
    assert study(["--repo", str(ROOT), "--target", "gpu-fused", "--null-only", "--blocks", "1", "--paired-seconds", "1",
                  "--dry-run", "--out-json", str(gpu), "--out-md", str(tmp_path / "gpu.md")]) == 0
    assert [a["arm"] for a in json.loads(gpu.read_text())["plan"]] == ["null"]
    assert study(["--null-only", "--no-null", "--out-json", str(tmp_path / "p.json"),
                            "--out-md", str(tmp_path / "p.md")]) == 2


@pytest.mark.parametrize("argv", [["--sizes", "x"], ["--trials", "0"], ["--bench", "("], ["--base", "no-such-ref"],
                                  ["--repo", "/"]])
def test_bad_arguments_exit_2_before_anything_runs(tmp_path, argv):
    assert study([*argv, "--out-json", str(tmp_path / "p.json"), "--out-md", str(tmp_path / "p.md")]) == 2
    assert not list(tmp_path.iterdir())


def test_block_trials_are_disjoint_runs_of_k_kept_passes(tmp_path):
    passes = tmp_path / "passes"
    order = ["base,head", "head,base"] * 3 + ["base,head"]  # 7 passes: two trials of 3, one left over
    for i in range(len(order)):
        (passes / f"pass-{i}").mkdir(parents=True)
        (passes / f"pass-{i}" / "marker").write_text(str(i))
    (passes / "passes.json").write_text(json.dumps({"schema": "rlperf.gate.passes/1", "base": "a", "head": "b",
                                                    "machine": "m", "bench": None, "order": order}))
    trials = cut.trial_folders(str(passes), 3, str(tmp_path / "scratch"))
    assert len(trials) == 2
    seen = []
    for folder in map(Path, trials):
        doc = json.loads((folder / "passes.json").read_text())
        assert len(doc["order"]) == 3 and doc["base"] == "a" and doc["head"] == "b"
        assert sorted(p.name for p in folder.iterdir() if p.name.startswith("pass-")) == ["pass-0", "pass-1", "pass-2"]
        seen += [(folder / f"pass-{j}" / "marker").read_text() for j in range(3)]
    assert seen == [str(i) for i in range(6)]  # consecutive, disjoint, in order
    assert json.loads((Path(trials[1]) / "passes.json").read_text())["order"] == order[3:6]


@pytest.mark.parametrize("argv", [["--steps", "5", "--sizes", "0.05,0.1"], ["--factors", "1.0"], ["--k", "0"],
                                  ["--factors", "nan"], ["--steps", "2,x", "--sizes", "0.05,0.1"],
                                  ["--paired-seconds", "4"], ["--paired-seconds", "nan", "--blocks", "1"],
                                  ["--trials-per-block", "0"], ["--target", "gpu-fused"], ["--target", "x"],
                                  ["--confirm", "1", "--blocks", "1"],
                                  ["--confirm", "x", "--paired-seconds", "9", "--blocks", "1"],
                                  ["--confirm", "30", "--paired-seconds", "9", "--blocks", "1"], ["--screens", "0"],
                                  ["--candidate-steps", "0,3"]])
def test_bad_block_arguments_exit_2(tmp_path, argv):
    assert study([*argv, "--out-json", str(tmp_path / "p.json"), "--out-md", str(tmp_path / "p.md")]) == 2
    assert not list(tmp_path.iterdir())


def test_paired_trials_are_disjoint_runs_of_each_points_pairs(tmp_path):
    from rlperf.gate import paired

    passes = tmp_path / "passes"
    (passes / "pass-0").mkdir(parents=True)
    (passes / "passes.json").write_text(json.dumps({"schema": "rlperf.gate.passes/1", "base": "a", "head": "b",
                                                    "machine": "m", "bench": None, "order": ["base,head"]}))
    spec = paired.PairedSpec(seconds=9.0, block=2)
    points = [paired.PointPairs(name="p", number=3, pairs=[(float(i), 1.0) for i in range(7)]),
              paired.PointPairs(name="q", number=1, pairs=[(1.0, float(i)) for i in range(4)])]
    paired.save(str(passes / "paired.json"), points, spec)
    trials = cut.paired_trial_folders(str(passes), 2, str(tmp_path / "scratch"))
    chunks = [paired.load(str(Path(t) / "paired.json"))[1] for t in trials]
    assert [c[0].pairs for c in chunks] == [[(0.0, 1.0), (1.0, 1.0), (2.0, 1.0)], [(3.0, 1.0), (4.0, 1.0), (5.0, 1.0)]]
    assert [c[1].pairs for c in chunks] == [[(1.0, 0.0), (1.0, 1.0)], [(1.0, 2.0), (1.0, 3.0)]]
    assert all(c[0].number == 3 for c in chunks) and (Path(trials[0]) / "pass-0").is_dir()


def test_a_point_without_pairs_stops_the_cut_instead_of_repeating_one_pass(tmp_path):
    """A paired session whose workers failed must not become 60 identical trials (0 false alarms, CV 0)."""
    from rlperf.errors import InfrastructureError
    from rlperf.gate import paired

    passes = tmp_path / "passes"
    (passes / "pass-0").mkdir(parents=True)
    points = [paired.PointPairs(name="p", number=1, pairs=[(1.0, 1.0)] * 4),
              paired.PointPairs(name="q", error="ImportError: no module of 'bench_x' imports")]
    paired.save(str(passes / "paired.json"), points, paired.PairedSpec(seconds=9.0, block=2))
    with pytest.raises(InfrastructureError, match="no pairs for 1 point.*q: ImportError"):
        cut.paired_trial_folders(str(passes), 2, str(tmp_path / "scratch"))


def test_a_confirming_round_joins_the_next_trials_pairs_to_the_flagged_points_only(tmp_path):
    from rlperf.gate import paired

    passes = tmp_path / "passes"
    (passes / "pass-0").mkdir(parents=True)
    (passes / "passes.json").write_text(json.dumps({"schema": "rlperf.gate.passes/1", "base": "a", "head": "b",
                                                    "machine": "m", "bench": None, "order": ["base,head"]}))
    points = [paired.PointPairs(name=n, number=1, pairs=[(1.0, float(i)) for i in range(6)], segments=[2, 2, 2])
              for n in ("p", "q")]
    paired.save(str(passes / "paired.json"), points, paired.PairedSpec(seconds=9.0, block=2))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    first = paired.load(cut.confirm_folder(str(passes), 3, 0, {"p"}, str(scratch)) + "/paired.json")[1]
    assert [h for _, h in first[0].pairs] == [0.0, 1.0, 2.0, 3.0] and first[0].confirm_rounds == 1  # t0 + t1
    assert [h for _, h in first[1].pairs] == [0.0, 1.0] and first[1].confirm_rounds == 0  # not flagged
    last = paired.load(cut.confirm_folder(str(passes), 3, 2, {"q"}, str(scratch)) + "/paired.json")[1]
    assert [h for _, h in last[1].pairs] == [4.0, 5.0, 2.0, 3.0]  # the last trial borrows the one before
    later = paired.load(cut.confirm_folder(str(passes), 3, 0, {"p"}, str(scratch), offset=2) + "/paired.json")[1]
    assert [h for _, h in later[0].pairs] == [0.0, 1.0, 4.0, 5.0]  # two trials later


def test_the_gpu_injection_adds_launches_after_the_fused_gather_and_the_null_edit_only_a_comment():
    source = (ROOT / gpu_fused.GPU_FILE).read_text()
    injected = gpu_fused.inject(source, 3)
    assert injected.count("self.idx.add_(0)") == 1 and "range(3)" in injected
    assert injected.index(gpu_fused.GPU_ANCHOR) < injected.index("self.idx.add_(0)")
    compile(injected, gpu_fused.GPU_FILE, "exec")
    null = gpu_fused.null_edit(source)
    assert [line for line in null.splitlines() if line not in source.splitlines()] == [
        "        # null change by rlperf gate-power"]


def test_paired_trials_follow_the_worker_pairs_when_the_session_restarted_them():
    from rlperf.gate import paired

    point = paired.PointPairs(name="p", number=1, pairs=[(1.0, float(i)) for i in range(9)], segments=[2, 3, 1, 3])
    assert [h for _, h in cut.trial_pairs(point, 2, 0).pairs] == [0.0, 1.0, 2.0, 3.0, 4.0]  # pairs 1-2
    assert [h for _, h in cut.trial_pairs(point, 2, 1).pairs] == [5.0, 6.0, 7.0, 8.0]  # pairs 3-4
    assert [h for _, h in cut.trial_pairs(point, 4, 2).pairs] == [5.0]
    assert len(cut.trial_pairs(point, 3, 0).pairs) == 3  # not a multiple: equal runs


def test_in_process_calibration_times_every_variant_against_the_base(tmp_path, monkeypatch):
    """Two kernels (base, 3 steps) compiled into this process and timed in turn: a ratio per candidate."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))  # measure() adds the variants folder
    variants = tmp_path / "variants"
    variants.mkdir()
    modules = injection.write_variants(str(variants), (ROOT / walk.KERNEL).read_text(), [3])
    assert modules == {0: "gate_power_walk_0", 3: "gate_power_walk_3"}
    chain = (variants / "gate_power_walk_3.py").read_text()
    assert "range(3)" in chain and "injected by rlperf gate-power" in chain
    assert (variants / "gate_power_walk_0.py").read_text() == (ROOT / walk.KERNEL).read_text()
    got = chain_timing.measure(str(variants), [3], rounds=3, calls=2)
    assert set(got["ratios"]) == {3} and got["rounds"] == 3 and got["base_ms"] > 0
    assert 0 < got["ratios"][3]["q1"] <= got["ratios"][3]["median"] <= got["ratios"][3]["q3"]


def test_the_calibration_child_imports_nothing_of_the_gate():
    """chain_timing runs by path in the clone's interpreter (PYTHONPATH = the clone's src), so a base
    commit without rlperf.gate.power can still be calibrated: only the measured packages may be imported."""
    import ast

    tree = ast.parse(Path(chain_timing.__file__).read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in modules if m and m.startswith("rlperf")} and not {
        m for m in modules if m and m.startswith("rlperf") and not m.startswith(("rlperf.envs", "rlperf.replay"))}


def test_a_trial_is_judged_by_the_gates_own_flow_as_the_verdict_job_judges(s, monkeypatch):
    """sessions.judge_trial calls gate.flow in process; its points are those `rlperf gate --no-run
    --passes-from` writes to --out-json for the same kept passes, record, config and factor."""
    from argparse import Namespace

    from tests.gate import test_passes as kept
    from tests.gate_fixtures import MACHINE

    kept.fake_asv(monkeypatch, s, {"base": [1.0, 1.0, 1.0], "head": [1.30, 1.32, 1.29]})
    assert kept.measure(s) == 1
    kept.record(s)
    args = Namespace(machine=MACHINE, bench="time_x")
    arm = {"arm": "inject-30%", "sha": s["head"]}
    judged = sessions.judge_trial(str(s["repo"]), s["base"], arm, args, str(s["keep"]), str(s["record"]), 1.10)
    assert judged["exit_code"] == 1
    assert judged["points"][kept.NAME]["status"] == "regression"
    assert judged["points"][kept.NAME]["ratio"] == pytest.approx(1.30)
    cli = kept.gate(s, "--no-run", "--passes-from", str(s["keep"]), "--config", sessions.judge_config(str(s["repo"])),
                    "--bench", "time_x", "--factor", "1.10", results=s["record"])
    doc = kept.verdict(s)
    assert cli == judged["exit_code"] == doc["exit_code"]
    assert judged["points"] == {f["name"]: {"status": f["status"], "ratio": f["ratio"], "base": f["base"]}
                                for f in doc["findings"] if f["base"] is not None}
    wide = sessions.judge_trial(str(s["repo"]), s["base"], arm, args, str(s["keep"]), str(s["record"]), 1.5)
    assert (wide["exit_code"], wide["points"][kept.NAME]["status"]) == (0, "ok")


def test_session_bias_tells_biased_sessions_from_shuffled_noise(monkeypatch, tmp_path, capsys):
    from rlperf.gate.power import session_bias

    noise = [1.0 + 0.01 * ((7 * i) % 11 - 5) for i in range(30)]  # a deterministic +-5 % wobble
    fair = {"block0-null": noise[:15], "block1-null": noise[15:]}
    biased = {"block0-null": [r * 0.9 for r in noise[:15]], "block1-null": [r * 1.1 for r in noise[15:]]}
    monkeypatch.setattr(session_bias, "pass_ratios", lambda work: {("null", "fair"): fair, ("null", "biased"): biased})
    rows = {r.point: r for r in session_bias.session_bias("w", shuffles=500)}
    assert rows["biased"].p < 0.01 < 0.2 < rows["fair"].p
    assert rows["biased"].observed_sd > rows["biased"].shuffled_median_sd
    monkeypatch.undo()
    assert rlperf_main(["gate-power", "session-bias", str(tmp_path)]) == 2  # no kept passes: usage error
    assert "holds no kept passes" in capsys.readouterr().err


def test_judge_config_leaves_the_clone_clean(tmp_path):
    """The study's gate config must not dirty the clone: the gate refuses a dirty checked-out head (exit 2)."""
    from rlperf.gate.power.sessions import judge_config

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    path = judge_config(str(tmp_path))
    assert Path(path).is_file()
    status = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""


def test_a_study_that_judged_no_trial_exits_5_not_0(monkeypatch, tmp_path, capsys):
    """The H200 study of 2026-12-04 whose one point's calls were too slow for its pairs: every trial left out,
    its gate session exit 0, and the study said exit 0 with 0 trials. Now it is no result (exit 5)."""
    from rlperf.gate.power import study as study_module

    arm = {"arm": "null", "trials": 0, "factor": 1.05, "k": 0}
    doc = {"dry_run": False, "arms": [arm, {**arm, "factor": 1.1}]}
    monkeypatch.setattr(study_module, "check_options", lambda args: None)
    monkeypatch.setattr(study_module, "run_study", lambda args, command: doc)
    monkeypatch.setattr("rlperf.gate.power.tables.to_markdown", lambda d: "table")
    argv = ["--repo", str(ROOT), "--null-only", "--out-json", str(tmp_path / "p.json"),
            "--out-md", str(tmp_path / "p.md")]
    assert study(argv) == 5
    err = capsys.readouterr().err
    assert "no trial judged for null at x1.05 (k 0), null at x1.1 (k 0)" in err and "no result" in err
    doc["arms"][1]["trials"] = 60  # one arm judged, one not: still no complete result
    assert study(argv) == 5
    doc["arms"][0]["trials"] = 60
    assert study(argv) == 0
    assert study_module.unjudged_arms({"dry_run": True, "arms": [arm]}) == []  # a dry run judges nothing by design
