"""`asv publish` builds the site from a small fixture results folder, with rlperf's machine facets.

The fixture is written through asv's own Results API (no benchmark run), for three commits of a
throw-away git repository configured by the project's real asv.conf.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from asv import util as asv_util
from asv.results import Results
from asv.runner import BenchmarkResult

from rlperf.asvtools.machine_file import machine_entry
from tests.asvtools.site_fixtures import publish_committed

ROOT = Path(__file__).resolve().parents[2]
MACHINE = "fixture-box"
BENCHMARKS = {
    "bench_fixture.Suite.time_gather": {
        "name": "bench_fixture.Suite.time_gather", "type": "time", "unit": "seconds", "version": "1",
        "params": [["'2**20'", "'2**22'"]], "param_names": ["rows"], "code": "", "number": 1, "repeat": 3,
        "rounds": 1, "min_run_count": 1, "sample_time": 0.01, "warmup_time": 0},
    "bench_fixture.Suite.track_speedup": {
        "name": "bench_fixture.Suite.track_speedup", "type": "track", "unit": "x", "version": "1",
        "params": [], "param_names": [], "code": "", "direction": "higher"},
}


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _write_results(results: Path, shas: list[str], entry: dict) -> None:
    asv_util.write_json(str(results / MACHINE / "machine.json"), entry, api_version=1)
    asv_util.write_json(str(results / "benchmarks.json"), BENCHMARKS, api_version=2)
    for i, sha in enumerate(shas):
        date = int(_git(results.parent, "log", "-1", "--format=%ct", sha)) * 1000
        res = Results({**entry, "python": "3.11"}, {}, sha, date, "3.11", "existing-py", {})
        slow = 1.0 + 0.1 * i
        res.add_result(BENCHMARKS["bench_fixture.Suite.time_gather"],
                       BenchmarkResult(result=[0.010 * slow, 0.040 * slow], samples=[[0.010] * 3, [0.040] * 3],
                                       number=[1, 1], errcode=0, stderr="", profile=None), record_samples=True)
        res.add_result(BENCHMARKS["bench_fixture.Suite.track_speedup"],
                       BenchmarkResult(result=[3.0 - 0.2 * i], samples=[None], number=[None], errcode=0,
                                       stderr="", profile=None))
        res.save(str(results))


def _repo(repo: Path, commits: int) -> tuple[list[str], dict]:
    """A git repository of `commits` commits configured by the project's asv.conf.json: (shas, conf)."""
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i in range(commits):
        (repo / "f.txt").write_text(str(i))
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", f"c{i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    conf = asv_util.load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    (repo / "asv.conf.json").write_text(json.dumps(conf))
    return shas, conf


def _publish(repo: Path, conf: dict) -> Path:
    proc = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(repo / "asv.conf.json")],
                          capture_output=True, text=True, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo / conf["html_dir"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    repo = tmp_path_factory.mktemp("siterepo")
    shas, conf = _repo(repo, 3)
    entry = machine_entry(name=MACHINE)
    _write_results(repo / conf["results_dir"], shas, entry)
    return _publish(repo, conf), entry


def test_publish_writes_the_site_and_one_graph_per_benchmark(site):
    html, _ = site
    assert (html / "index.html").is_file()
    graphs = {p.name for p in (html / "graphs").rglob("*.json")}
    assert {"bench_fixture.Suite.time_gather.json", "bench_fixture.Suite.track_speedup.json"} <= graphs


def test_machine_identity_keys_become_site_facets(site):
    html, entry = site
    index = json.loads((html / "index.json").read_text())
    for facet in ("gpu", "gpu_count", "cuda", "driver", "torch", "numba"):
        assert index["params"][facet] == [entry[facet]], facet
    assert index["benchmarks"]["bench_fixture.Suite.track_speedup"]["direction"] == "higher"


def test_a_second_cpu_under_the_same_name_draws_its_own_series(tmp_path):
    """The cpu_flags facet: two hosts with one model string and one machine name give two graphs."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shas, conf = _repo(repo, 4)
    entry = machine_entry(name=MACHINE)
    results = repo / conf["results_dir"]
    _write_results(results, shas[:2], {**entry, "cpu_flags": "aaaa"})
    _write_results(results, shas[2:], {**entry, "cpu_flags": "bbbb"})
    html = _publish(repo, conf)
    assert sorted(json.loads((html / "index.json").read_text())["params"]["cpu_flags"]) == ["aaaa", "bbbb"]
    dirs = sorted(part for p in (html / "graphs").rglob("bench_fixture.Suite.track_speedup.json")
                  for part in p.parts if part.startswith("cpu_flags-"))
    assert dirs == ["cpu_flags-aaaa", "cpu_flags-bbbb"], dirs


# --- The committed history ----------------------------------------------------------------------------

HISTORY_MACHINE = "cpu-2vcpu-amd-epyc"  # the backfilled CPU box (results/asv/<machine>/PROVENANCE.md)


@pytest.fixture(scope="module")
def committed_site(tmp_path_factory):
    """`asv publish` of the committed results/asv (tests/asvtools/site_fixtures.py)."""
    return publish_committed(tmp_path_factory.mktemp("committed"))


def test_publishing_the_committed_results_skips_nothing(committed_site):
    _, log = committed_site
    assert "Skipping" not in log, log


def test_the_backfilled_machine_draws_lines_with_history(committed_site):
    html, _ = committed_site
    graphs = [p for p in (html / "graphs").rglob("bench_env.EnvFused.time_fused.json")
              if f"machine-{HISTORY_MACHINE}" in p.parts and "cpu_flags-unrecorded" not in p.parts
              and any(part.startswith("cpu_flags-") for part in p.parts)]
    assert graphs, f"no graph of a recorded host for {HISTORY_MACHINE}"
    series = json.loads(graphs[0].read_text())  # [[revision, [value per parameter point]], ...]
    measured = [sum(v is not None for v in (values if isinstance(values, list) else [values]))
                for _, values in series]
    assert sum(1 for n in measured if n) >= 3, series  # at least three commits carry values


def test_every_committed_result_names_its_cpu_or_says_it_is_unrecorded():
    """asv keys a series by every param: a result without cpu_flags would draw apart from its host's
    series for that alone (scripts/stamp_host_facet.py fills in results stored before the facet)."""
    missing = [str(p.relative_to(ROOT)) for p in (ROOT / "results" / "asv").glob("*/*.json")
               if "cpu_flags" not in (json.loads(p.read_text()).get("params") or json.loads(p.read_text()))]
    assert not missing, missing


def _real(values) -> bool:
    """Any measured number (asv stores None for a failure and NaN for an n/a point)."""
    return any(v is not None and v == v for v in (values if isinstance(values, list) else [values]))


def test_no_committed_result_is_dropped_as_stale():
    """asv publish keeps a stored value only under its benchmark's current version, and drops the rest
    without a word (Results.get_result_keys, the filter publish calls). A result judged to measure
    something else is retired to results/asv-retired/ (scripts/migrate_asv_versions.py
    --retire-judged-changed), so the published history holds nothing the site would skip."""
    benchmarks = json.loads((ROOT / "results" / "asv" / "benchmarks.json").read_text())
    stale, read = [], 0
    for path in sorted((ROOT / "results" / "asv").glob("*/*-*.json")):
        result, read = Results.load(str(path)), read + 1
        dropped = {k for k in result.get_all_result_keys() if k in benchmarks} - result.get_result_keys(benchmarks)
        stale += [f"{path.parent.name}/{path.name[:8]} {key} (stored {result.benchmark_version[key][:12]}, "
                  f"today {benchmarks[key]['version']})" for key in sorted(dropped)]
    assert read >= 100  # the committed history: a glob that finds nothing must not pass
    assert not stale, "stale (run scripts/migrate_asv_versions.py):\n" + "\n".join(stale)


def test_retired_results_are_kept_and_were_judged_to_measure_something_else():
    """Nothing is lost by retiring: every archived entry is one a reviewed judgment calls changed."""
    from rlperf.asvtools.version_migration import load_judgments

    changed = {(name, h) for j in load_judgments(str(ROOT / "results" / "asv" / "version-judgments.toml"))
               if not j.same for name in j.benchmarks for h in j.stored}
    retired = sorted((ROOT / "results" / "asv-retired").glob("*/*-*.json"))
    assert retired
    for path in retired:
        result = Results.load(str(path))
        for key in result.get_all_result_keys():
            assert (key, result.benchmark_version[key]) in changed, (path.name, key)


def test_every_benchmark_with_a_stored_value_draws_a_graph_of_its_machine(committed_site):
    """A kept result whose values all sit at parameter values today's suite no longer lists draws nothing."""
    html, _ = committed_site
    benchmarks = json.loads((ROOT / "results" / "asv" / "benchmarks.json").read_text())
    expected = set()
    for path in (ROOT / "results" / "asv").glob("*/*-*.json"):
        result = Results.load(str(path))
        for key in result.get_result_keys(benchmarks):
            if _real(result.get_result_value(key, result.get_result_params(key))):  # as stored, any params
                expected.add((path.parent.name, key))
    drawn = set()
    for graph in (html / "graphs").rglob("*.json"):
        machine = next((part[len("machine-"):] for part in graph.parts if part.startswith("machine-")), None)
        if machine and graph.name != "summary.json" and any(_real(point[1]) for point in json.loads(graph.read_text())):
            drawn.add((machine, graph.name[:-len(".json")]))
    assert len(expected) >= 8  # the committed history as migrated: a fixture that lost it must fail
    assert expected <= drawn, sorted(expected - drawn)
