"""`make bench` (rlperf bench): the plan of points, the decision to leave CUDA points out once per benchmark,
the summary from a result file and the log, the guard against another host's committed folder, the
progress lines, and the benchmarks that used to fail or spawn once per point."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
from types import SimpleNamespace

import pytest
from asv.benchmarks import Benchmarks
from asv_runner.benchmarks.mark import SkipNotImplemented

from rlperf.asvtools import bench_plan, progress, results_target, run_summary
from rlperf.asvtools.bench_plan import Plan, Point
from rlperf.errors import UsageError


def _bench(name, params=(), names=(), cache=None):
    return {"name": name, "params": [list(p) for p in params], "param_names": list(names),
            **({"setup_cache_key": cache} if cache else {})}


FAKE = [
    _bench("bench_env.EnvFused.time_fused", [["'probe'", "'g1_walk_flat'"], ["512", "8192"], ["1", "2", "4"]],
           ["task", "num_envs", "threads"]),
    _bench("bench_replay.ReplayH2D.track_ms", [["20", "22"], ["'host'", "'uva'"], ["1", "2"]],
           ["capacity_exp", "placement", "gpus"]),
    _bench("bench_replay.ReplayPeakMemory.track_device_peak_bytes", [["20", "26"], ["'host'", "'gpu'"]],
           ["capacity_exp", "placement"]),
    _bench("bench_replay.ReplayPeakMemory.track_host_peak_bytes", [["20", "26"], ["'host'", "'gpu'"]],
           ["capacity_exp", "placement"]),
    _bench("bench_env.EnvParity.track_parity_reward", [["'probe'"], ["8192"]], ["task", "num_envs"],
           cache="bench_env:200"),
]


def _asv_selection(benchmarks, regexes):
    """What asv itself runs for these --bench regexes: {benchmark: [param indices]}."""
    sel = Benchmarks(SimpleNamespace(benchmark_dir="benchmarks"), benchmarks, regex=regexes)
    return {name: idx for name, idx in sel.benchmark_selection.items() if name in sel and idx}


def test_asv_runs_exactly_the_planned_points_and_no_cuda_point_on_a_cpu_host():
    plan = bench_plan.make_plan(FAKE, cuda=False)
    ran = _asv_selection(FAKE, plan.regexes())
    planned: dict[str, list[int]] = {}
    for p in plan.run:
        planned.setdefault(p.benchmark, []).append(p.index)
    assert ran == {k: sorted(v) for k, v in planned.items()}
    assert "bench_replay.ReplayH2D.track_ms" not in ran
    assert "bench_replay.ReplayPeakMemory.track_device_peak_bytes" not in ran
    assert "bench_replay.ReplayPeakMemory.track_host_peak_bytes" in ran  # the class's CPU track still runs
    fused = [p.params for p in plan.run if p.benchmark == "bench_env.EnvFused.time_fused"]
    assert fused == [("'probe'", "8192", "1"), ("'probe'", "8192", "2"), ("'g1_walk_flat'", "8192", "1"),
                     ("'g1_walk_flat'", "8192", "2")]


def test_cuda_points_are_decided_once_per_benchmark_with_one_reason():
    plan = bench_plan.make_plan(FAKE, cuda=False)
    benches = {p.benchmark for p in plan.not_run}
    assert benches == {"bench_replay.ReplayH2D.track_ms", "bench_replay.ReplayPeakMemory.track_device_peak_bytes"}
    assert set(plan.not_run.values()) == {bench_plan.NO_CUDA_REASON}
    assert bench_plan.describe_not_run(plan) == [
        f"bench_replay.ReplayH2D (1 points): {bench_plan.NO_CUDA_REASON}",
        f"bench_replay.ReplayPeakMemory (1 points): {bench_plan.NO_CUDA_REASON}"]
    with_cuda = bench_plan.make_plan(FAKE, cuda=True)
    assert not with_cuda.not_run and any(p.benchmark == "bench_replay.ReplayH2D.track_ms" for p in with_cuda.run)


def test_points_come_in_asv_order_setup_cache_groups_first_by_name():
    plan = bench_plan.make_plan(FAKE, cuda=True)
    order = list(dict.fromkeys(p.benchmark for p in plan.run))
    assert order[0] == "bench_env.EnvFused.time_fused"  # the no-setup_cache group appears first by name
    assert order[-1] == "bench_env.EnvParity.track_parity_reward"


def test_full_runs_every_point_and_bench_narrows():
    full = bench_plan.make_plan(FAKE, full=True, cuda=True)
    assert len(full.run) == full.total_points == 12 + 8 + 4 + 4 + 1
    narrowed = bench_plan.make_plan(FAKE, bench="EnvFused.*'probe'", cuda=True)
    assert {p.params[0] for p in narrowed.run} == {"'probe'"}


def test_a_bench_regex_outside_the_default_points_names_the_full_run():
    with pytest.raises(UsageError, match=r"no point of the default selection.*--full"):
        bench_plan.make_plan(FAKE, bench=r"time_fused\('probe', 512", cuda=True)
    with pytest.raises(UsageError, match="matches no benchmark; suites: bench_env, bench_replay"):
        bench_plan.make_plan(FAKE, bench="nothing_like_this", cuda=True)
    with pytest.raises(UsageError, match="not a valid regular expression"):
        bench_plan.make_plan(FAKE, bench="(", cuda=True)


@pytest.fixture(scope="module")
def suite():
    return bench_plan.discover("benchmarks")


def test_the_default_selection_covers_every_benchmark_class_with_real_values(suite):
    classes = {b["name"].rsplit(".", 1)[0] for b in suite}
    assert classes == set(bench_plan.DEFAULT_POINTS), "every class needs default points (and no stale entry)"
    by_name = {b["name"]: b for b in suite}
    for key, products in bench_plan.DEFAULT_POINTS.items():
        for b in (b for n, b in by_name.items() if n.startswith(key + ".")):
            values = dict(zip(b["param_names"], b["params"]))
            for product in products:
                for param, wanted in product.items():
                    assert {repr(v) for v in wanted} <= set(values[param]), f"{key}: {param}={wanted}"
    for key in bench_plan.NEEDS_CUDA:
        assert any(n == key or n.startswith(key + ".") for n in by_name), key
    plan = bench_plan.make_plan(suite, cuda=False)
    assert {p.benchmark.rsplit(".", 1)[0] for p in [*plan.run, *plan.not_run]} == classes
    assert len(plan.run) <= 80, "the default run must stay a few points per class"


def test_cuda_benchmarks_skip_themselves_without_cuda_before_importing_torch(monkeypatch, tmp_path):
    import benchmarks.bench_e2e as e2e
    import benchmarks.bench_replay as replay
    from rlperf.measure import guards

    monkeypatch.setattr(guards, "visible_gpu_free_bytes", lambda: [])
    monkeypatch.setattr(replay.Resources, "probe", classmethod(lambda cls: pytest.fail("asked torch")))
    for cls, placement in ((replay.ReplayH2D, "host"), (replay.ReplayEndToEnd, "uva"), (replay.ReplayGpuSample, "gpu")):
        with pytest.raises(NotImplementedError, match="CUDA device"):
            cls().setup(20, placement, 1)
    with pytest.raises(NotImplementedError, match="needs a CUDA device"):
        e2e.E2ELearner().setup("g1_motion_tracking", "eager")
    monkeypatch.chdir(tmp_path)  # setup_cache makes its folder in asv's working directory
    assert "needs a CUDA device" in e2e.E2EIteration().setup_cache()["skip_all"]


def test_device_peak_without_a_device_is_a_skip_not_zero_bytes(capsys):
    import benchmarks.bench_replay as replay

    bench = replay.ReplayPeakMemory()
    bench._peak, bench._on_device = {"device_peak_bytes": 0, "host_peak_rss_bytes": 5}, False
    with pytest.raises(SkipNotImplemented):
        bench.track_device_peak_bytes(20, "host")
    assert "asv: skipped: SkipNotImplemented('no CUDA device" in capsys.readouterr().out
    assert bench.track_host_peak_bytes(20, "host") == 5


def test_an_unmeasurable_in_kernel_draw_ratio_is_a_skip_in_the_body(capsys):
    import benchmarks.bench_noise as noise

    bench = noise.ProbeInKernelNoise()
    bench.result = {"numpy_over_in_kernel_draws": None, "overhead_ratio": 1.02}
    with pytest.raises(SkipNotImplemented):  # asv_runner turns this (not a plain NotImplementedError) into n/a
        bench.track_numpy_over_in_kernel_draws(8192, 2)
    reason = run_summary.parse_log("[ 50.00%] ··· bench_noise.ProbeInKernelNoise.track_numpy_over_in_kernel_draws"
                                   "   ok\n[ 50.00%] ···· For parameters: 8192, 2\n"
                                   + capsys.readouterr().out)[0]
    assert reason == {"bench_noise.ProbeInKernelNoise.track_numpy_over_in_kernel_draws(8192, 2)":
                      "in-kernel draws cost nothing measurable at this point (in-kernel ms <= passed ms)"}
    bench.result["numpy_over_in_kernel_draws"] = 31.5
    assert bench.track_numpy_over_in_kernel_draws(8192, 2) == 31.5


def test_the_whole_step_in_kernel_ratio_returns_a_value_where_the_draws_only_ratio_skips():
    import benchmarks.bench_noise as noise

    for cls in (noise.ProbeInKernelNoise, noise.MotionTrackingInKernelNoise):
        bench = cls()
        bench.result = {"numpy_over_in_kernel_draws": None, "overhead_ratio": 0.98, "numpy_path_over_in_kernel": 20.5}
        assert bench.track_numpy_path_over_in_kernel(8192, 1) == 20.5  # no SkipNotImplemented
    track = noise._InKernelNoise.track_numpy_path_over_in_kernel
    assert track.direction == "higher" and track.unit == "(numpy draws + passed) / in-kernel"


def test_parity_checks_run_once_in_setup_cache_and_each_track_reads_its_value(monkeypatch):
    import benchmarks.bench_env as bench_env
    from rlperf.envs import parity, registry

    calls = []

    def check(w, profile, n, threads, seed):
        calls.append(n)
        return parity.ParityResult(1e-7, 2e-7, 3e-7, 4e-7, 0, failures=["x"])

    def prepare(self, task):
        if task == "probe":
            raise NotImplementedError("probe cannot load here")
        return SimpleNamespace(workload=SimpleNamespace())

    monkeypatch.setattr(parity, "check", check)
    monkeypatch.setattr(registry, "default_profile", lambda w: "p")
    monkeypatch.setattr(bench_env._EnvBench, "_prepare", prepare)
    bench = bench_env.EnvParity()
    cache = bench.setup_cache()
    assert len(calls) == 2  # one check per loadable (task, envs), shared by the six tracks
    bench.setup(cache, "g1_walk_flat", 8192)
    assert bench.track_parity_reward(cache, "g1_walk_flat", 8192) == 1e-7
    assert bench.track_parity_failures(cache, "g1_walk_flat", 8192) == 1.0
    with pytest.raises(NotImplementedError, match="probe cannot load"):
        bench.setup(cache, "probe", 8192)


# a trimmed asv --show-stderr log: a failed setup_cache, a failure, setup and in-body skips
LOG = """\
[12.50%] ··· Setting up bench_fake:22                                    failed
[12.50%] ···· Traceback (most recent call last):
                File "bench_fake.py", line 23, in setup_cache
              NotImplementedError: no device

              asv: setup_cache failed (exit status 1)

[12.50%] ··· bench_fake.Cached.track_x skipped (setup_cache failed)
[25.00%] ··· bench_fake.Fake.track_fails                             1/3 failed
[25.00%] ··· === ========
              n
              1   failed
             === ========
[25.00%] ···· For parameters: 1
              Traceback (most recent call last):
                File "bench_fake.py", line 18, in track_fails
              RuntimeError: boom one

              For parameters: 2
              asv: skipped: NotImplementedError('two is skipped in setup')
              asv: benchmark failed (exit status 1)

[37.50%] ··· ...ke.Fake.track_value                                     ok
[37.50%] ···· For parameters: 2
              asv: skipped: NotImplementedError("two's skipped")

              For parameters: 3
              asv: skipped: SkipNotImplemented('three is null')
[50.00%] ··· bench_fake.time_plain                                     32.4±0μs
"""


def test_the_log_gives_each_point_its_skip_reason_or_error():
    skips, errors = run_summary.parse_log(LOG, ["bench_fake.Fake.track_value", "bench_fake.Fake.track_fails"])
    assert skips == {"bench_fake.Fake.track_fails(2)": "two is skipped in setup",
                     "bench_fake.Fake.track_value(2)": "two's skipped",
                     "bench_fake.Fake.track_value(3)": "three is null"}
    assert errors == {"bench_fake.Cached.track_x": "setup_cache failed: NotImplementedError: no device",
                      "bench_fake.Fake.track_fails(1)": "RuntimeError: boom one"}


def _write_result(folder, sha, results):
    """A minimal asv (api 2) result file, as asv run writes it."""
    os.makedirs(folder, exist_ok=True)
    doc = {"commit_hash": sha, "env_name": "existing-py", "date": 1, "params": {"machine": "box"}, "python": "3.11",
           "requirements": {}, "env_vars": {}, "result_columns": ["result", "params", "version"],
           "results": {k: [v, p, "1"] for k, (v, p) in results.items()}, "durations": {}, "version": 2}
    path = os.path.join(folder, f"{sha[:8]}-existing-py.json")
    with open(path, "w") as fh:
        json.dump(doc, fh)
    return path


def test_summary_counts_measured_skipped_failed_from_the_result_file_and_log(tmp_path):
    sha = "abcdef1234567890"
    _write_result(str(tmp_path / "box"), sha, {
        "bench_fake.Fake.track_value": ([1.5, math.nan, math.nan], [["1", "2", "3"]]),
        "bench_fake.Fake.track_fails": ([None, math.nan, 1.0], [["1", "2", "3"]]),
        "bench_fake.time_plain": ([3e-5], []),
    })
    path = run_summary.result_file(str(tmp_path), "box", sha)
    values = run_summary.stored_values(path)
    assert values["bench_fake.time_plain"] == 3e-5 and values["bench_fake.Fake.track_fails(1)"] is None
    pts = [Point("bench_fake.Fake.track_value", (n,), i) for i, n in enumerate("123")]
    pts += [Point("bench_fake.Fake.track_fails", (n,), i) for i, n in enumerate("123")]
    pts += [Point("bench_fake.time_plain", ()), Point("bench_fake.Cached.track_x", ())]
    gpu = Point("bench_replay.ReplayH2D.track_ms", ("20", "'host'", "1"))
    plan = Plan(run=pts, not_run={gpu: bench_plan.NO_CUDA_REASON})
    summary = run_summary.summarize(plan, values, LOG)
    assert [p.name for p in summary.measured] == ["bench_fake.Fake.track_value(1)", "bench_fake.Fake.track_fails(3)",
                                                  "bench_fake.time_plain"]
    assert sorted(summary.reasons()) == sorted([("two is skipped in setup", 1), ("three is null", 1),
                                                (bench_plan.NO_CUDA_REASON, 1), ("two's skipped", 1)])
    assert {p.name: e for p, e in summary.failed.items()} == {
        "bench_fake.Fake.track_fails(1)": "RuntimeError: boom one",
        "bench_fake.Cached.track_x": "setup_cache failed: NotImplementedError: no device"}
    text = "\n".join(run_summary.format_summary(summary, results="R", site="S", log="L"))
    assert "9 points: 3 measured, 4 skipped, 2 failed" in text
    assert "bench_fake.Fake.track_fails(1): RuntimeError: boom one" in text
    assert re.search(r"1 x needs a CUDA device.*\n\s+in bench_replay.ReplayH2D$", text, re.M)  # by class
    assert text.rstrip().endswith("results: R\nsite:    S\nlog:     L")


def _git_repo(tmp_path, machine_json: dict | None):
    repo = str(tmp_path / "repo")
    os.makedirs(os.path.join(repo, "results", "asv", "box"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    if machine_json is not None:
        with open(os.path.join(repo, "results", "asv", "box", "machine.json"), "w") as fh:
            json.dump(machine_json, fh)
        subprocess.run(["git", "-C", repo, "add", "results"], check=True)
    return repo


HERE = {"machine": "box", "os": "Linux 6.1", "arch": "x86_64", "cpu": "AMD EPYC", "cpu_flags": "aaaa",
        "num_cpu": "2", "ram": "100", "gpu": "none", "gpu_count": "0", "gpu_memory": "0", "driver": "none",
        "torch": "2.13.0"}


@pytest.fixture
def this_host(monkeypatch):
    from rlperf.asvtools import machine_file

    monkeypatch.setattr(machine_file, "machine_entry", lambda ident=None, name=None: dict(HERE, machine=name))


def test_default_results_are_local_and_never_the_committed_history(tmp_path, this_host):
    repo = _git_repo(tmp_path, dict(HERE, cpu_flags="bbbb"))
    target = results_target.choose(repo, "box", record=False)
    assert target.local and target.results_dir == os.path.join(".asv", "results")
    assert subprocess.run(["git", "check-ignore", "-q", ".asv/results/box/x.json"]).returncode == 0


def test_recording_into_another_hosts_committed_folder_is_refused(tmp_path, this_host):
    repo = _git_repo(tmp_path, dict(HERE, cpu_flags="bbbb", os="Linux 5.0"))
    with pytest.raises(UsageError, match=r"results/asv/box/ is committed history from another host "
                                         r"\(cpu_flags: stored 'bbbb', this host 'aaaa'; os: .*MACHINE=my-box"):
        results_target.choose(repo, "box", record=True)


def test_recording_is_allowed_for_the_same_host_or_an_uncommitted_folder(tmp_path, this_host):
    same = _git_repo(tmp_path, dict(HERE, cpu_flags="unrecorded", torch="other"))  # unrecorded: no contradiction
    assert not results_target.choose(same, "box", record=True).local
    fresh = _git_repo(tmp_path / "b", None)
    assert results_target.choose(fresh, "new-box", record=True).results_dir == os.path.join("results", "asv")


def test_the_newest_fingerprint_decides_when_the_folder_has_one(tmp_path, monkeypatch, this_host):
    from rlperf.asvtools import fingerprint

    repo = _git_repo(tmp_path, dict(HERE))
    fingerprint.store(os.path.join(repo, "results", "asv"), "box", "a" * 40,
                      {"schema": fingerprint.SCHEMA, "static": {"cpu": "AMD EPYC", "cpu_flags_sha256": "ffff"},
                       "measured_at": "2026-01-01T00:00:00Z"})
    monkeypatch.setattr(fingerprint, "static_facts", lambda: {"cpu": "AMD EPYC", "cpu_flags_sha256": "eeee"})
    assert results_target.host_differences(os.path.join(repo, "results", "asv"), "box") == [
        "cpu_flags_sha256: stored 'ffff', this host 'eeee'"]


def test_console_keeps_status_lines_and_drops_tables_and_stderr_blocks():
    assert progress.console_line("[ 25.00%] ··· bench_fake.Fake.track_fails       1/3 failed\n")
    assert progress.console_line("· Discovering benchmarks\n")
    assert not progress.console_line("[25.00%] ··· === ========\n")
    assert not progress.console_line("              1   failed \n")
    assert not progress.console_line("[25.00%] ···· For parameters: 1\n")


def test_each_point_is_announced_and_a_long_one_gets_heartbeats():
    plan = Plan(run=[Point("b.C.track", ("1",), 0), Point("b.C.track", ("2",), 1)])
    now = [0.0]
    out = io.StringIO()
    rep = progress.Reporter(plan, io.StringIO(), out=out, clock=lambda: now[0])
    rep.watch(("run", "b.C.track-1"))
    for t in range(1, 75):
        now[0] = float(t)
        rep.watch(("run", "b.C.track-1"))
    rep.watch(("setup_cache", "b.D.track"))
    now[0] = 100.0
    rep.watch(None)  # the point ended: no line for the change itself
    for t in range(101, 106):
        now[0] = float(t)
        rep.watch(None)
    lines = out.getvalue().splitlines()
    assert lines[0] == "  [2/2] b.C.track(2)"
    assert lines[1:3] == ["    ... still running [2/2] b.C.track(2) (30 s)",
                          "    ... still running [2/2] b.C.track(2) (60 s)"]
    assert lines[3] == "  setup_cache of b.D (once for all its points)"
    assert lines[4:] == ["    ... asv is working between points (30 s since the last line)"]
    assert rep.longest_gap <= progress.HEARTBEAT_S


def test_the_running_point_is_read_from_asvs_child_process():
    class Child:
        def __init__(self, cmd):
            self.cmd = cmd

        def cmdline(self):
            return self.cmd

    asv_py = "/venv/lib/python3.11/site-packages/asv/benchmark.py"
    kids = [Child(["python", "-c", "x"]), Child(["python", asv_py, "run", "/r/benchmarks", "b.C.track-7", "{}",
                                                "None", "/tmp/r"])]
    assert progress.running_point(kids) == ("run", "b.C.track-7")
    assert progress.running_point([Child(["python", asv_py, "setup_cache", "/r/benchmarks", "b.C.t", "{}"])]) == \
        ("setup_cache", "b.C.t")
    assert progress.running_point([Child(["python", "-m", "asv", "run"])]) is None


def test_rlperf_bench_refuses_a_bad_regex_before_running_anything(monkeypatch, capsys, tmp_path):
    from rlperf import cli

    monkeypatch.setattr(bench_plan, "discover", lambda path: FAKE)
    monkeypatch.setattr(progress, "run_asv", lambda *a, **k: pytest.fail("asv ran"))
    monkeypatch.setattr("rlperf.asvtools.machine_file.write_machine_file",
                        lambda **k: pytest.fail("machine file written for a refused run"))
    assert cli.main(["bench", "--machine", "box", "--bench", r"time_fused\('probe', 512"]) == 2
    assert "no point of the default selection" in capsys.readouterr().err


def test_asv_runs_wide_so_names_stay_whole_and_the_console_gets_compact_lines(tmp_path):
    import sys

    log = tmp_path / "bench.log"
    out = io.StringIO()
    code = "import os; print('[ 50.00%] ··· bench_x.C.track_y' + ' ' * 40 + 'ok ' + os.environ['COLUMNS'])"
    status, _ = progress.run_asv([sys.executable, "-c", code], Plan(), str(log), cwd=str(tmp_path), out=out)
    assert status == 0
    assert out.getvalue() == f"[ 50.00%] ··· bench_x.C.track_y  ok {progress.ASV_COLUMNS}\n"
    assert " " * 40 in log.read_text()  # the log keeps asv's own line
