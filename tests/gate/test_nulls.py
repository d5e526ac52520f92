"""`rlperf gate-power nulls` (rlperf.gate.power.null_*): the null-run sample, one run's cost from recorded
durations, the append-only log, the summary's per-run and per-point figures, bad input, and the run path
with the gate call faked (nothing is measured here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rlperf import atomic
from rlperf.cli import main as rlperf_main
from rlperf.envs.threads import max_numba_threads
from rlperf.errors import UsageError
from rlperf.gate.power import null_cost, null_log, null_run, null_sample, null_summary
from rlperf.gate.power.tables import wilson
from rlperf.gate.power.targets import target

ROOT = Path(__file__).resolve().parents[2]
META = ROOT / "results" / "asv" / "benchmarks.json"


def nulls(argv) -> int:
    try:
        return rlperf_main(["gate-power", "nulls", *argv])
    except SystemExit as exc:
        return int(exc.code or 0)


# --- the sample ---------------------------------------------------------------------------------------------

def test_the_sample_has_over_100_points_on_two_cores_across_every_cpu_suite():
    benchmarks = null_sample.load_benchmarks(str(META))
    plan = null_sample.sample_plan(benchmarks)
    two, sixteen = null_sample.counts(plan, benchmarks, 2), null_sample.counts(plan, benchmarks, 16)
    assert sum(two.values()) == 107 and sum(sixteen.values()) == 197
    assert all(two[s] > 0 for s in set(null_sample.SUITES.values()))  # every CPU suite, on the smallest box
    assert two["env kernels, fused"] == 18 and sixteen["env kernels, fused"] == 45
    assert not plan.not_run  # nothing of it needs CUDA
    regex = null_sample.bench_regex(plan)
    import re

    names = [p.name for p in plan.run]
    assert all(re.search(regex, n) for n in names)
    assert not re.search(regex, "bench_env.EnvFused.time_fused('probe', 8192, 3)")
    assert not re.search(regex, "bench_replay.ReplayGpuSample.track_ms(20, 'gpu', 1)")


def test_the_sample_holds_no_point_that_can_skip_on_its_value():
    """A point n/a by its value (an in-body skip) can be n/a on head only: exit 4 on a null change. The
    in-kernel noise draws-only ratio is such a point; the whole-step ratio stands in for it."""
    benchmarks = null_sample.load_benchmarks(str(META))
    plan = null_sample.sample_plan(benchmarks)
    assert null_sample.body_skipping(plan, benchmarks) == []
    in_kernel = {(p.benchmark.split(".")[1], p.benchmark.rsplit(".", 1)[1]) for p in plan.run if "InKernelNoise" in p.benchmark}
    assert in_kernel == {(cls, track) for cls in ("ProbeInKernelNoise", "MotionTrackingInKernelNoise")
                         for track in ("track_overhead_ratio", "track_numpy_path_over_in_kernel")}
    assert null_sample.counts(plan, benchmarks, 2)["in-kernel noise"] == 8  # 2 tracks x 2 tasks x 1-2 threads
    # the classes whole, as the sample held them: the draws-only ratio comes back, and is found
    from rlperf.asvtools.bench_plan import make_plan

    whole = make_plan(list(benchmarks.values()), cuda=False, points={
        f"bench_noise.{cls}": [{"num_envs": [8192]}] for cls in ("ProbeInKernelNoise", "MotionTrackingInKernelNoise")})
    assert null_sample.body_skipping(whole, benchmarks) == [
        "bench_noise.MotionTrackingInKernelNoise.track_numpy_over_in_kernel_draws",
        "bench_noise.ProbeInKernelNoise.track_numpy_over_in_kernel_draws"]


@pytest.mark.parametrize("body, skips", [
    ("if v is None:\n            skip_point('no value')\n        return v", True),
    ("if v is None:\n            _suite.skip_point('no value')\n        return v", True),
    ("raise SkipNotImplemented('no value')", True),
    ("raise SkipNotImplemented", True),
    ("raise NotImplementedError('a failure in a body, not a skip')", False),
    ("return self.result['x']", False),
])
def test_an_in_body_skip_is_read_from_the_stored_code_and_a_setup_skip_is_not(body, skips):
    code = (f"class _Base:\n    def track_x(self, n):\n        v = self.result\n        {body}\n\n"
            "    def setup(self, n):\n        skip_point('the box has too few cores')\n")
    assert null_sample.skips_in_body({"name": "bench_a.A.track_x", "code": code}) is skips
    with pytest.raises(UsageError, match="bench_a.A.track_x: its code in benchmarks.json does not parse"):
        null_sample.skips_in_body({"name": "bench_a.A.track_x", "code": "def track_x(:"})


# --- the cost, from recorded durations ----------------------------------------------------------------------

def _result(sha: str, durations: dict, values: dict, setup_cache: float) -> dict:
    return {"commit_hash": sha, "result_columns": ["result", "params", "version", "started_at", "duration"],
            "results": {name: [values[name], [], "1", 0, durations[name]] for name in durations},
            "durations": {"<setup_cache bench_x:1>": setup_cache, "<build>": 0.5}}


def test_the_cost_of_a_run_adds_up_the_recorded_durations(tmp_path):
    nan = float("nan")
    machine = tmp_path / "asv" / "box"
    machine.mkdir(parents=True)
    # benchmark A ran 2 points (a third not selected: NaN) in 10 s, then 2 in 14 s: 5 and 7 s per point -> 6
    (machine / "a.json").write_text(json.dumps(_result("a" * 40, {"A": 10.0, "B": 3.0}, {"A": [1, 2, nan], "B": [None]},
                                                       2.0)))  # B's null: a failed point, which ran
    (machine / "b.json").write_text(json.dumps(_result("b" * 40, {"A": 14.0, "B": 5.0}, {"A": [1, 2, nan], "B": [1]}, 4.0)))
    (machine / "machine.json").write_text("{}")  # not a result: skipped
    log = tmp_path / "backfill.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"sha": "a" * 40, "exit": 0, "outcome": "stored", "seconds": 30.0},  # 30 - (10 + 3 + 2 + 0.5) = 14.5
        {"sha": "b" * 40, "exit": 0, "outcome": "stored", "seconds": 40.0},  # 40 - (14 + 5 + 4 + 0.5) = 16.5
        {"sha": "b" * 40, "exit": 0, "outcome": "stored", "seconds": 9.0, "bench": "^A"},  # a partial redo: its
    ]) + "\n")                                                                 # file mixes two runs, left out
    history = null_cost.history_costs(str(tmp_path / "asv"), "box", str(log))
    assert history.commits == 2
    assert history.per_point_s == {"A": pytest.approx(6.0), "B": pytest.approx(4.0)}
    assert history.setup_cache_s == {"bench_x:1": pytest.approx(3.0)}
    assert history.overhead_s == pytest.approx(14.5) and history.overhead_n == 1
    from rlperf.asvtools.bench_plan import Point

    points = [Point("A", ("1",)), Point("A", ("2",)), Point("B", ()), Point("C", ())]
    est = null_cost.estimate(points, history, passes=5, paired_names={"A(1)"}, paired_seconds=9.0, restarts=9,
                             startup_s=2.0, setup_cache_keys={"A": "bench_x:1", "B": None})
    assert est.unmeasured == ["C"] and est.measured_points == 3 and est.paired_points == 1
    assert est.pass_s == pytest.approx(6 + 6 + 4 + 3.0 + 14.5)
    assert est.paired_point_s == pytest.approx(9 + 9 * 2.0)
    assert est.total_s == pytest.approx(2 * 5 * est.pass_s + 27.0)
    text = "\n".join(est.lines(history, 18, 9.0, 9))
    assert "not in the sum: C" in text and "27 s each" in text
    no_startup = null_cost.estimate(points, history, passes=5, paired_names={"A(1)"}, paired_seconds=9.0, restarts=9,
                                    startup_s=None, setup_cache_keys={})
    assert no_startup.total_s is None  # an unmeasured start-up is not guessed


def test_the_worker_start_up_comes_from_committed_paired_files():
    startup, pairs = null_cost.pair_startup(str(ROOT / "results/reports/gate/cpu-2vcpu-amd-epyc"))
    doc = json.loads((ROOT / "results/reports/gate/cpu-2vcpu-amd-epyc/power-paired/9-pairs-9s-third-host-confirm/e2e/"
                             "paired.json").read_text())
    point = doc["points"][0]
    expected = (point["wall"] - doc["spec"]["seconds"] * (1 + point["confirm_rounds"])) / len(point["segments"])
    assert pairs == len(point["segments"]) and startup == pytest.approx(expected)


def test_plan_prints_the_counts_and_the_expected_time(capsys):
    assert nulls(["plan", "--repo", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "2 cores: 107 points" in out and "16 cores: 197 points" in out
    assert "skip on their measured value (head n/a where base measured: exit 4): none" in out
    assert "expected wall time of one null run" in out and " min" in out
    assert "on 16 cores: not computed" in out


# --- the log ------------------------------------------------------------------------------------------------

def _record(started=1_800_000_000.0, exit_code=0, findings=None, base="b" * 40, head="h" * 40, **kw) -> dict:
    verdict = None if exit_code is None else {"exit_code": exit_code, "findings": [
        {"name": name, **f} for name, f in (findings or {}).items()]}
    return {"started": started, "base": base, "head": head, "seconds": 3000.0, "gate_exit": exit_code,
            "verdict": verdict, "host": {"static": {"cpu": "Xeon", "num_cpu": 16}}, "sample_points": 197, **kw}


def test_the_log_appends_new_files_and_never_replaces_one(tmp_path):
    log = tmp_path / "nulls"
    first = null_log.append(str(log), _record(exit_code=0))
    second = null_log.append(str(log), _record(exit_code=1))  # same second, same commits: a name of its own
    assert first != second and Path(second).name.endswith("-1.json")
    records = null_log.read(str(log))
    assert [r["verdict"]["exit_code"] for r in records] == [0, 1]
    before = Path(first).read_text()
    with pytest.raises(FileExistsError):
        atomic.create_json(first, {"schema": "other"})
    assert Path(first).read_text() == before
    assert sorted(os.listdir(log)) == sorted([Path(first).name, Path(second).name])  # no temp file left


def test_an_interrupted_append_leaves_no_record_and_no_temp_file(tmp_path, monkeypatch):
    log = tmp_path / "nulls"
    null_log.append(str(log), _record())

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.json, "dump", boom)
    with pytest.raises(KeyboardInterrupt):
        null_log.append(str(log), _record(started=1_900_000_000.0))
    monkeypatch.undo()
    assert len(os.listdir(log)) == 1 and len(null_log.read(str(log))) == 1


def test_reading_a_log_names_a_file_that_is_no_record(tmp_path):
    null_log.append(str(tmp_path), _record())
    (tmp_path / "stray.json").write_text('{"schema": "rlperf.gate/1"}')
    with pytest.raises(UsageError, match="stray.json"):
        null_log.read(str(tmp_path))


# --- the summary --------------------------------------------------------------------------------------------

OK = {"status": "ok", "ratio": 1.01, "factor": 1.1}


def test_the_summary_counts_runs_and_points_apart():
    two_alarms = {"p1": {"status": "regression", "ratio": 1.2, "factor": 1.1},
                  "p2": {"status": "regression", "ratio": 1.15, "factor": 1.1},
                  "p3": OK, "adv": {"status": "advisory", "ratio": 1.5, "factor": 1.4}}
    records = [_record(exit_code=0, findings={"p1": OK, "p2": OK, "p3": OK, "adv": OK | {"status": "advisory"}}),
               _record(exit_code=1, findings=two_alarms),
               _record(exit_code=None, error="gate crashed")]
    for i, r in enumerate(records):
        r["file"] = f"r{i}.json"
    doc = null_summary.summarize(records)
    assert doc["runs"] == 3 and doc["runs_with_verdict"] == 2
    assert doc["per_run"]["hits"] == 1 and doc["per_run"]["n"] == 2  # one run, however many points it flagged
    assert doc["per_point"]["hits"] == 2 and doc["per_point"]["n"] == 6  # advisory points are not gated
    assert doc["points"]["p1"]["false_alarms"] == 1 and doc["points"]["p1"]["judged"] == 2
    assert doc["flagged_runs"] == [{"file": "r1.json", "exit_code": 1, "points": ["p1", "p2"]}]
    assert doc["runs_without_verdict"][0]["file"] == "r2.json"  # listed, never counted as clean
    assert doc["decision"] == "missed"  # 1 of 2: the Wilson lower bound, 9.5 %, is above 5 % already
    assert doc["more_clean_runs_to_meet"] is None
    text = null_summary.to_markdown(doc, "LOG")
    assert "50.0% (1/2" in text and "`p1`" in text and "r2.json" in text and "MISSED" in text


def test_the_target_is_met_missed_or_undecided_by_the_wilson_interval():
    assert null_summary.runs_to_decide(0, 0) == 73
    assert wilson(0, 73)[1] <= 0.05 < wilson(0, 72)[1]
    assert null_summary.runs_to_decide(0, 30) == 43  # 30 clean runs cannot show <= 5 % yet
    assert wilson(1, 30 + null_summary.runs_to_decide(1, 30))[1] <= 0.05

    def doc(flagged, n):
        recs = [_record(exit_code=1 if i < flagged else 0) for i in range(n)]
        for i, r in enumerate(recs):
            r["file"] = f"{i}.json"
        return null_summary.summarize(recs)

    assert doc(0, 80)["decision"] == "met" and doc(10, 20)["decision"] == "missed"
    undecided = doc(1, 30)
    assert undecided["decision"] == "undecided" and null_summary.summarize([])["decision"] == "no run yet"
    assert undecided["more_clean_runs_to_meet"] == null_summary.runs_to_decide(1, 30)
    assert "more runs with no flag would bring its upper bound" in null_summary.to_markdown(undecided, "LOG")


# --- bad input: exit 2, nothing written --------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["run", "--log", "FILE"], "is a file"),
    (["run", "--log", "FILE/sub"], "is a file, not a folder"),
    (["run", "--log", "LOG", "--profile", "nope"], "valid: gpu, xeon"),
    (["run", "--log", "LOG", "--base", "no-such-ref"], "no-such-ref"),
    (["run", "--log", "LOG", "--machine", "../x"], "machine name"),
    (["run", "--log", "LOG", "--benchmarks", "MISSING"], "cannot read the suite's metadata"),
    (["summary", "MISSING"], "not a folder"),
    (["plan", "--cores", "two"], "--cores"),
    (["plan", "--history-machine", "nope"], "--history-machine"),
    ([], "give a nulls action"),
])
def test_bad_input_exits_2_naming_the_problem_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, message):
    (tmp_path / "FILE").write_text("x")
    monkeypatch.setattr(null_run, "run_gate", lambda *a: pytest.fail("the gate ran"))
    argv = [str(tmp_path / a) if a in ("FILE", "FILE/sub", "LOG", "MISSING") else a for a in argv]
    assert nulls([*argv, *(["--repo", str(ROOT)] if argv and argv[0] != "summary" else [])]) == 2
    assert message in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["FILE"]


# --- the run path, with the gate faked ----------------------------------------------------------------------

def _git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A tiny repository holding what a null run reads: the walk kernel (the null arm's file), gate.toml and
    the suite's metadata."""
    r = tmp_path / "repo"
    for rel in (target("walk").path, "gate.toml", "results/asv/benchmarks.json"):
        (r / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, r / rel)
    _git("init", "-q", "-b", "main", cwd=r)
    _git("add", "-A", cwd=r)
    _git("commit", "-qm", "base", cwd=r)
    return r


def _fake_gate(exit_code, findings, seen):
    def run_gate(cmd, cwd):
        args = dict(zip(cmd, cmd[1:]))
        seen.update(cmd=cmd, diff=_git("diff", args["--base"], args["--head"], cwd=cwd))
        if findings is not None:
            Path(args["--out-json"]).write_text(json.dumps({
                "exit_code": exit_code, "machine": "ci-xeon", "profile": "xeon", "mode": "interleaved",
                "counts": {}, "findings": [{"name": n, "status": s, "ratio": r, "factor": 1.1} for n, s, r in findings]}))
        return exit_code, "gate output tail"
    return run_gate


def test_a_null_run_gates_the_null_commit_with_the_profile_and_records_the_verdict(repo, tmp_path, monkeypatch, capsys):
    seen: dict = {}
    monkeypatch.setattr(null_run, "run_gate", _fake_gate(1, [("p1", "regression", 1.2), ("p2", "ok", 1.0)], seen))
    monkeypatch.setattr(null_run, "fingerprint", lambda: {"static": {"cpu": "test cpu", "num_cpu": 2}})
    log = tmp_path / "log"
    assert nulls(["run", "--repo", str(repo), "--log", str(log), "--machine", "ci-xeon"]) == 0
    cmd = seen["cmd"]
    args = dict(zip(cmd, cmd[1:]))
    base = _git("rev-parse", "HEAD", cwd=repo)
    assert cmd[1:4] == ["-m", "rlperf", "gate"] and "--run" in cmd and args["--profile"] == "xeon"
    assert args["--base"] == base and args["--head"] != base and args["--machine"] == "ci-xeon"
    assert args["--config"].endswith("gate.toml") and args["--repo"] == args["--config"][:-len("/gate.toml")]
    benchmarks = null_sample.load_benchmarks(str(META))
    assert args["--bench"] == null_sample.bench_regex(null_sample.sample_plan(benchmarks))
    added = [line for line in seen["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+            # null change by rlperf gate-power"]  # a comment, nothing else
    assert _git("log", "--format=%s", cwd=repo) == "base"  # the user's repository is untouched
    [record] = null_log.read(str(log))
    assert record["verdict"]["exit_code"] == 1 and record["verdict"]["findings"][0] == {
        "name": "p1", "status": "regression", "ratio": 1.2, "factor": 1.1}  # the gate's verdict JSON as written
    assert record["base"] == base and record["head"] == args["--head"] and record["gate_exit"] == 1
    assert record["host"]["static"]["cpu"] == "test cpu" and len(record["load_before"]) == 3
    assert record["sample_points"] == sum(null_sample.counts(null_sample.sample_plan(benchmarks), benchmarks,
                                                             max_numba_threads()).values())
    assert record["started_utc"] <= record["ended_utc"] and record["error"] is None
    out = capsys.readouterr().out
    assert "record:" in out and "1 point(s) flagged" in out
    assert ("WARNING" in out) == (record["sample_points"] < 100)
    assert not os.path.exists(args["--repo"])  # the throw-away clone is gone


def test_a_run_on_too_few_cores_warns_that_it_covers_under_100_points(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(null_run, "run_gate", _fake_gate(0, [("p", "ok", 1.0)], {}))
    monkeypatch.setattr(null_run, "fingerprint", lambda: {"static": {}})
    monkeypatch.setattr(null_run, "max_numba_threads", lambda: 1)
    assert nulls(["run", "--repo", str(repo), "--log", str(tmp_path / "log")]) == 0
    assert "WARNING: 1 usable core(s) run 77 of the sample's points" in capsys.readouterr().out
    [record] = null_log.read(str(tmp_path / "log"))
    assert record["sample_points"] == 77 and record["cores"] == 1


def test_a_run_without_a_verdict_is_recorded_and_exits_5(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(null_run, "run_gate", _fake_gate(5, None, {}))
    monkeypatch.setattr(null_run, "fingerprint", lambda: {"static": {}})
    log = tmp_path / "log"
    assert nulls(["run", "--repo", str(repo), "--log", str(log)]) == 5
    [record] = null_log.read(str(log))
    assert record["verdict"] is None and record["gate_exit"] == 5 and record["error"] == "gate output tail"
    doc = null_summary.summarize([record])
    assert doc["runs_with_verdict"] == 0 and doc["decision"] == "no run yet"


def test_summary_command_writes_what_it_prints(tmp_path, capsys):
    log = tmp_path / "log"
    null_log.append(str(log), _record(exit_code=0, findings={"p": OK}))
    out_md, out_json = tmp_path / "s.md", tmp_path / "s.json"
    assert nulls(["summary", str(log), "--out-md", str(out_md), "--out-json", str(out_json)]) == 0
    assert capsys.readouterr().out == out_md.read_text()
    assert json.loads(out_json.read_text())["per_run"]["n"] == 1


def test_the_gate_call_streams_its_output_and_returns_its_exit_code_and_tail(capsys):
    import sys

    code, tail = null_run.run_gate([sys.executable, "-c", "import sys\nfor i in range(50): print(i)\nsys.exit(3)"],
                                   str(ROOT))
    assert code == 3 and tail.splitlines() == [str(i) for i in range(10, 50)]  # the last 40 lines
    assert capsys.readouterr().err.splitlines() == [str(i) for i in range(50)]  # every line, as it came
