"""The gate proves itself on a tiny asv project: real `asv run --python=same --set-commit-hash` per commit.

Commits of the tiny project (sleep-based timings; a doubling stays unmistakable even on a loaded 2-core box):
  c1  base: time_work sleeps 10 ms, time_param(n) sleeps 5·n ms, track_speedup = 2 (higher is better)
  c2  identical code, README edit only                       -> exit 0
  c3  time_work sleeps 20 ms (2x slower: sleeps overshoot by ms on a loaded box) -> exit 1 (regression)
  c4  time_param(2) raises NotImplementedError (n/a on head) -> exit 4 (coverage loss)
  c5  the suite does not import (syntax error in a benchmark)  -> exit 3 (benchmark failure)
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from rlperf.cli import main
from rlperf.gate.exitcodes import GateExit

pytestmark = pytest.mark.slow

BENCH = '''
import time
import tinypkg


class Tiny:
    number = 1
    repeat = 10
    rounds = 1
    warmup_time = 0

    def time_work(self):
        tinypkg.work()

    def track_speedup(self):
        return 2.0
    track_speedup.direction = "higher"
    track_speedup.unit = "x"


class Param:
    params = [1, 2]
    param_names = ["n"]
    number = 1
    repeat = 10
    rounds = 1
    warmup_time = 0

    def setup(self, n):
        if n in tinypkg.UNSUPPORTED:
            raise NotImplementedError(f"n={n} unsupported")

    def time_param(self, n):
        time.sleep(0.005 * n)
'''

PKG = '''
import time

DELAY = {delay}
UNSUPPORTED = {unsupported}


def work():
    time.sleep(DELAY)
'''

ASV_CONF = {
    "version": 1, "project": "tinypkg", "repo": ".", "branches": ["main"], "environment_type": "virtualenv",
    "benchmark_dir": "benchmarks", "results_dir": "results", "html_dir": "html", "launch_method": "spawn",
}
PYPROJECT = '''
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "tinypkg"
version = "0.0.1"

[tool.setuptools]
packages = ["tinypkg"]
'''


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo, message, *, delay=0.010, unsupported=(), readme="tiny\n", bench=BENCH):
    (repo / "tinypkg" / "__init__.py").write_text(PKG.format(delay=delay, unsupported=set(unsupported) or "set()"))
    (repo / "benchmarks" / "bench_tiny.py").write_text(textwrap.dedent(bench))
    (repo / "README.md").write_text(readme)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny repository with commits c1..c4, a private $HOME for asv's machine file, cwd in the repo."""
    repo = tmp_path_factory.mktemp("tinyrepo")
    _git(repo, "init", "-q", "-b", "main")
    (repo / "tinypkg").mkdir()
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "asv.conf.json").write_text(json.dumps(ASV_CONF, indent=2))
    # the tests' outputs: untracked, they would make main's tip (c3) a dirty head (exit 2)
    (repo / ".gitignore").write_text("verdict-*\ninterleaved/\nkept-passes/\nempty/\nmerged/\n")
    shas = {"c1": _commit(repo, "c1")}
    shas["c2"] = _commit(repo, "c2: docs", readme="tiny, documented\n")
    shas["c3"] = _commit(repo, "c3: 2x slower", delay=0.020, readme="tiny, documented\n")
    _git(repo, "checkout", "-q", "-b", "drop", shas["c2"])
    shas["c4"] = _commit(repo, "c4: drop a point", unsupported=(2,), readme="tiny, documented\n")
    _git(repo, "checkout", "-q", "-b", "broken", shas["c2"])
    shas["c5"] = _commit(repo, "c5: suite does not import", readme="tiny, documented\n",
                         bench=BENCH + "\ndef broken(:\n")
    _git(repo, "checkout", "-q", "main")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mp.delenv("RLPERF_MACHINE", raising=False)
        mp.chdir(repo)
        yield repo, shas


def _gate(repo, base, head, *extra):
    out = repo / f"verdict-{base[:6]}-{head[:6]}.json"
    code = main(["gate", "--base", base, "--head", head, "--machine", "tiny", "--out-json", str(out),
                 "--out-md", str(out.with_suffix(".md")), *extra])
    verdict = json.loads(out.read_text())
    assert verdict["exit_code"] == code
    return code, verdict, {f["name"]: f for f in verdict["findings"]}


def test_identical_code_exits_zero_and_stores_both_commits(tiny):
    repo, c = tiny
    code, verdict, by_name = _gate(repo, c["c1"], c["c2"])
    assert code == GateExit.OK, verdict
    assert by_name["bench_tiny.Tiny.time_work"]["method"] == "mann-whitney"
    assert by_name["bench_tiny.Tiny.track_speedup"]["direction"] == "higher"
    assert sorted(p.name[:8] for p in (repo / "results" / "tiny").glob("*-*.json")) == sorted(
        [c["c1"][:8], c["c2"][:8]])
    assert json.loads((repo / "results" / "tiny" / "machine.json").read_text())["numba"]


def test_twice_as_slow_is_a_significant_regression(tiny):
    repo, c = tiny
    code, verdict, by_name = _gate(repo, c["c1"], c["c3"])
    assert code == GateExit.REGRESSION, (verdict["errors"], verdict["findings"])
    work = by_name["bench_tiny.Tiny.time_work"]
    assert work["status"] == "regression" and work["method"] == "mann-whitney"
    assert 1.3 < work["ratio"] < 2.2
    # unchanged: never blocking; on a loaded box it may land over the factor without significance
    assert by_name["bench_tiny.Param.time_param(1)"]["status"] in ("ok", "noise")
    assert "regression" in (repo / f"verdict-{c['c1'][:6]}-{c['c3'][:6]}.md").read_text()


def test_a_point_measured_on_base_but_skipped_on_head_is_coverage_loss(tiny):
    repo, c = tiny
    code, verdict, by_name = _gate(repo, c["c1"], c["c4"])
    assert code == GateExit.COVERAGE_LOSS, verdict["errors"]
    assert by_name["bench_tiny.Param.time_param(2)"]["status"] == "skipped-on-head"


def test_a_missing_commit_is_an_infrastructure_error(tiny):
    repo, c = tiny
    code, verdict, _ = _gate(repo, c["c1"], "0123456789abcdef0123456789abcdef01234567")
    assert code == GateExit.INFRASTRUCTURE
    assert "unknown commit" in verdict["errors"][0]


def test_no_run_without_stored_results_is_an_infrastructure_error(tiny):
    repo, c = tiny
    code, verdict, _ = _gate(repo, c["c1"], "main~1", "--no-run", "--results-dir", str(repo / "empty"))
    assert code == GateExit.INFRASTRUCTURE and "no results" in verdict["errors"][0]


def test_backfill_skips_stored_commits(tiny, capsys):
    repo, c = tiny
    _gate(repo, c["c1"], c["c3"])  # makes sure c1..c3 are stored whatever the test order
    assert main(["gate", "--backfill", f"{c['c1']}..{c['c3']}", "--machine", "tiny"]) == GateExit.OK
    assert capsys.readouterr().out.count("already stored") == 2


def test_interleaved_run_catches_the_slowdown_on_the_median_of_passes(tiny):
    repo, c = tiny
    results, keep = repo / "interleaved", repo / "kept-passes"
    code, verdict, by_name = _gate(repo, c["c1"], c["c3"], "--run", "--passes", "2", "--results-dir", str(results),
                                   "--bench", "Tiny.time_work", "--keep-passes", str(keep))
    assert code == GateExit.REGRESSION, (verdict["errors"], verdict["findings"])
    work = by_name["bench_tiny.Tiny.time_work"]
    assert work["method"] == "median-of-2" and work["detail"].count("×") == 2
    assert "interleaved" in verdict["mode"]
    assert list(by_name) == ["bench_tiny.Tiny.time_work"]  # --bench: the rest is neither compared nor coverage
    # the last pass is stored for history, with the session's host fingerprint beside each commit
    assert sorted(p.name[:8] for p in (results / "tiny").glob("*-*.json")) == sorted([c["c1"][:8], c["c3"][:8]])
    assert len(list((results / "tiny" / "fingerprints").glob("*.fingerprint"))) == 2
    # the kept passes, judged elsewhere (gate.yml's verdict job): the same per-pass ratios, the same verdict
    assert sorted(p.name for p in keep.iterdir()) == ["pass-0", "pass-1", "passes.json"]
    kept_code, kept, kept_by_name = _gate(repo, c["c1"], c["c3"], "--no-run", "--passes-from", str(keep),
                                          "--results-dir", str(results), "--bench", "Tiny.time_work")
    assert kept_code == GateExit.REGRESSION and "stored interleaved passes" in kept["mode"]
    assert kept_by_name["bench_tiny.Tiny.time_work"]["detail"] == work["detail"]


def test_a_subset_run_merges_into_the_commits_stored_results(tiny):
    """Real asv: a `--run --bench` subset stores what it measured and keeps the rest of the commit's file
    (the unselected parameter of a parameterised benchmark, which asv writes as NaN, and the benchmarks
    it did not run)."""
    from rlperf.gate.results import load_points

    repo, c = tiny
    results = repo / "merged"
    assert _gate(repo, c["c1"], c["c2"], "--results-dir", str(results))[0] == GateExit.OK  # both stored whole
    def stored():
        return {name: p for (_, name), p in load_points(str(results), "tiny", c["c1"]).items()}

    before = stored()
    subset = r"Tiny.time_work|time_param\(1\)"
    code, verdict, by_name = _gate(repo, c["c1"], c["c2"], "--run", "--passes", "1", "--bench", subset,
                                   "--results-dir", str(results))
    assert code == GateExit.OK, verdict
    after = stored()
    assert set(after) == set(before) and len(after) == 4
    for name in ("bench_tiny.Tiny.time_work", "bench_tiny.Param.time_param(1)"):  # measured again
        assert after[name].samples != before[name].samples
    for name in ("bench_tiny.Tiny.track_speedup", "bench_tiny.Param.time_param(2)"):  # kept as stored
        assert after[name] == before[name]


def test_a_head_whose_suite_does_not_import_is_a_benchmark_failure(tiny):
    repo, c = tiny
    code, verdict, _ = _gate(repo, c["c1"], c["c5"])  # c1 is stored by the tests above (or benchmarked now)
    assert code == GateExit.BENCHMARK_FAILURE, verdict
    assert "does not import" in verdict["failures"][0]


def test_bisect_names_the_commit_that_regressed(tiny, capsys):
    repo, c = tiny
    _gate(repo, c["c1"], c["c3"])  # c1..c3 stored whatever the test order: the bisection runs nothing new
    _gate(repo, c["c1"], c["c2"])
    capsys.readouterr()
    assert main(["gate", "--bisect", f"{c['c1']}..{c['c3']}", "--machine", "tiny"]) == GateExit.REGRESSION
    out = capsys.readouterr().out
    assert f"first commit that regressed: {c['c3']}" in out
    assert main(["gate", "--bisect", f"{c['c1']}..{c['c2']}", "--machine", "tiny"]) == GateExit.OK
