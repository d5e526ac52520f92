"""scripts/migrate_asv_versions.py (rlperf.asvtools.version_migration, .benchmark_code): a stored result
takes today's version only when the code that stored it is proven and means the same; the rest is left
and listed; every rewritten file keeps its JSON layout, and a bad file leaves all of them untouched."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from asv.results import Results
from asv_runner.discovery import disc_benchmarks

from rlperf.asvtools import version_migration as vm
from rlperf.asvtools.benchmark_code import benchmark_code
from rlperf.errors import InfrastructureError, UsageError

ROOT = Path(__file__).resolve().parents[2]
MACHINE = "box"

# Decorators, an inherited setup, a module-level setup, setup_cache, a subclass and a class without setup:
# the cases asv_runner's code text depends on.
ASV_SHAPES = '''
import functools


def mark(func):
    func.direction = "higher"
    return func


def setup():
    pass   # module-level: joined into every benchmark of the module


class _Base:
    def setup(self, n):
        self.n = n  # trailing comment


    def setup_cache(self):
        return {"x": 1}


class Suite(_Base):
    version = "7"
    params = [[1, 2]]
    param_names = ["n"]

    @mark
    def track_a(self, cache, n):
        """Docstring."""
        return n + cache["x"]

    def time_b(self, cache, n):
        pass


class Plain:
    def time_c(self):
        sum(range(3))
'''


def test_the_code_text_and_version_are_asv_runners_own(tmp_path, monkeypatch):
    package = tmp_path / "rlperf_fixture_benches"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bench_shapes.py").write_text(ASV_SHAPES)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {b.name: b for b in disc_benchmarks(str(package))}
    assert set(found) == {"bench_shapes.Suite.track_a", "bench_shapes.Suite.time_b", "bench_shapes.Plain.time_c"}
    for name, bench in found.items():
        ours = benchmark_code(ASV_SHAPES, name)
        assert (ours.code, ours.version) == (bench.code, bench.version), name
    assert benchmark_code(ASV_SHAPES, "bench_shapes.Suite.track_a").param_names == ("n",)


# --- The migration, on a throw-away repository ---------------------------------------------------------

OLD = '''
class Same:
    param_names = ["n"]

    def time_a(self, n):
        sum(range(n))


class Cosmetic:
    def time_b(self):
        sum(range(3))


class Edited:
    def time_c(self):
        sum(range(3))


class Renamed:
    param_names = ["n"]

    def time_d(self, n):
        pass
'''
NEW = '''
class Same:
    version = "1"
    param_names = ["n"]

    def time_a(self, n):
        sum(range(n))


class Cosmetic:
    version = "1"

    def time_b(self):
        sum(range(3))  # a comment changes the hash, not the meaning


class Edited:
    version = "1"

    def time_c(self):
        sum(range(4))


class Renamed:
    version = "1"
    param_names = ["rows"]

    def time_d(self, rows):
        pass
'''
NAMES = ["bench_m.Same.time_a", "bench_m.Cosmetic.time_b", "bench_m.Edited.time_c", "bench_m.Renamed.time_d"]


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo, source):
    (repo / "benchmarks").mkdir(exist_ok=True)
    (repo / "benchmarks" / "bench_m.py").write_text(source)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "c")
    return _git(repo, "rev-parse", "HEAD")


def _benchmarks_json(results, source):
    doc = {"version": 2}
    for name in NAMES:
        code = benchmark_code(source, name)
        doc[name] = {"name": name, "code": code.code, "version": code.version, "param_names": list(code.param_names),
                     "params": [["1"]] if code.param_names else [], "type": "time", "unit": "seconds"}
    (results / "benchmarks.json").write_text(json.dumps(doc))


def _result_doc(sha, versions):
    results = {}
    for name in NAMES:
        params = [["1"]] if name.endswith(("time_a", "time_d")) else []
        results[name] = [[0.5], params, versions[name]]
    return {"commit_hash": sha, "env_name": "existing-py", "date": 1, "params": {"machine": MACHINE},
            "python": "3.11", "requirements": {}, "env_vars": {}, "result_columns": ["result", "params", "version"],
            "results": results, "durations": {}, "version": 2}


@pytest.fixture
def repo(tmp_path):
    """(repo, results dir, old versions): one result stored at the old commit, benchmarks.json of today."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    old_sha = _commit(repo, OLD)
    _commit(repo, NEW)
    results = repo / "results"
    (results / MACHINE).mkdir(parents=True)
    (results / MACHINE / "machine.json").write_text(json.dumps({"machine": MACHINE, "version": 1}, indent=4))
    _benchmarks_json(results, NEW)
    versions = {name: benchmark_code(OLD, name).version for name in NAMES}
    (results / MACHINE / f"{old_sha[:8]}-existing-py.json").write_text(json.dumps(_result_doc(old_sha, versions)))
    return repo, results, versions


def _sha(source, name):
    return hashlib.sha256(benchmark_code(source, name).code.encode()).hexdigest()


def _outcomes(repo, results, judgments=()):
    return {d.benchmark: d.outcome for d in vm.plan(str(results), str(repo), [MACHINE], list(judgments))}


def test_same_code_and_cosmetic_edits_migrate_the_rest_is_left(repo):
    repo, results, _ = repo
    assert _outcomes(repo, results) == {"bench_m.Same.time_a": "same-code", "bench_m.Cosmetic.time_b": "cosmetic",
                                        "bench_m.Edited.time_c": "unreviewed", "bench_m.Renamed.time_d": "params-differ"}


def test_a_judgment_applies_only_to_the_code_pair_it_names(repo):
    repo, results, _ = repo
    name = "bench_m.Edited.time_c"
    same = vm.Judgment((name,), (_sha(OLD, name),), _sha(NEW, name), True, "reviewed")
    assert _outcomes(repo, results, [same])[name] == "judged-same"
    other_today = vm.Judgment((name,), (_sha(OLD, name),), "0" * 64, True, "reviewed against other code")
    assert _outcomes(repo, results, [other_today])[name] == "unreviewed"
    changed = vm.Judgment((name,), (_sha(OLD, name),), None, False, "other inputs")
    assert _outcomes(repo, results, [changed])[name] == "judged-changed"


def test_a_version_no_code_at_its_commit_produces_is_unverified_and_a_gone_benchmark_is_listed(repo):
    repo, results, versions = repo
    path = next((results / MACHINE).glob("*-existing-py.json"))
    doc = json.loads(path.read_text())
    doc["results"]["bench_m.Same.time_a"][2] = "f" * 64
    doc["results"]["bench_m.Gone.time_z"] = [[1.0], [], "e" * 64]
    path.write_text(json.dumps(doc))
    outcomes = _outcomes(repo, results)
    assert outcomes["bench_m.Same.time_a"] == "unverified" and outcomes["bench_m.Gone.time_z"] == "gone"


def test_apply_rewrites_only_the_versions_in_the_files_own_layout_and_asv_then_keeps_them(repo):
    repo, results, versions = repo
    path = next((results / MACHINE).glob("*-existing-py.json"))
    before = json.loads(path.read_text())
    assert vm.apply(vm.plan(str(results), str(repo), [MACHINE], [])) == [str(path)]
    text = path.read_text()
    after = json.loads(text)
    assert text == json.dumps(after)  # asv's one-line layout
    assert {n: row[2] for n, row in after["results"].items()} == {
        **versions, "bench_m.Same.time_a": "1", "bench_m.Cosmetic.time_b": "1"}
    for name in NAMES:
        before["results"][name][2] = after["results"][name][2]
    assert before == after
    today = json.loads((results / "benchmarks.json").read_text())
    kept = Results.load(str(path)).get_result_keys(today)  # what asv publish draws
    assert kept == {"bench_m.Same.time_a", "bench_m.Cosmetic.time_b"}
    again = vm.plan(str(results), str(repo), [MACHINE], [])  # a second run: the migrated ones are current
    assert {d.benchmark for d in again if d.outcome == "current"} == kept and vm.apply(again) == []


def test_a_file_in_a_layout_it_cannot_reproduce_stops_the_run_before_anything_is_written(repo):
    repo, results, versions = repo
    first = next((results / MACHINE).glob("*-existing-py.json"))
    odd = results / MACHINE / "ffffffff-existing-py.json"
    odd.write_text(json.dumps(json.loads(first.read_text()), indent=3))
    before = {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()}
    with pytest.raises(InfrastructureError, match="ffffffff-existing-py.json: its JSON layout"):
        vm.apply(vm.plan(str(results), str(repo), [MACHINE], []))
    assert {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()} == before


def test_a_benchmarks_json_that_is_not_todays_suite_is_refused(repo):
    repo, results, _ = repo
    _benchmarks_json(results, OLD)  # as if benchmarks/ were edited and asv never re-discovered
    with pytest.raises(InfrastructureError, match="does not describe benchmarks/ as it is now"):
        vm.plan(str(results), str(repo), [MACHINE], [])


def test_judgments_name_the_field_at_fault(tmp_path):
    path = tmp_path / "j.toml"
    path.write_text('[[judgment]]\nbenchmarks = ["a.B.c"]\nstored = "abc"\nsame = false\nreason = "r"\n')
    with pytest.raises(UsageError, match="judgment 1: `stored` must be the sha256"):
        vm.load_judgments(str(path))
    path.write_text(f'[[judgment]]\nbenchmarks = ["a.B.c"]\nstored = "{"a" * 64}"\nsame = true\nreason = "r"\n')
    with pytest.raises(UsageError, match="`today` must be the sha256.*required when same = true"):
        vm.load_judgments(str(path))


def _load_script():
    spec = importlib.util.spec_from_file_location("migrate_asv_versions", ROOT / "scripts" / "migrate_asv_versions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _load_script()


@dataclass
class _Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def script(capsys):
    """The script's main() in this process (an interpreter per call costs seconds on a loaded box)."""
    def run(*args, cwd):
        code = SCRIPT.main(["--repo", str(cwd), *args])
        out = capsys.readouterr()
        return _Run(code, out.out, out.err)
    return run


def test_the_script_dry_run_lists_and_writes_nothing_then_logs_what_it_rewrote(repo, script):
    repo, results, _ = repo
    before = {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()}
    log = results / "version-migration.log"
    args = ("--results-dir", str(results), "--log", str(log))
    proc = script(*args, "--dry-run", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "bench_m.Edited.time_c\tunreviewed" in proc.stdout and "summary: 1 cosmetic" in proc.stdout
    assert {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()} == before and not log.exists()
    proc = script(*args, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert text.startswith("# ") and "python scripts/migrate_asv_versions.py --repo" in text
    assert "1 file(s) rewritten" in text and "bench_m.Same.time_a\tsame-code\t" in text and "-> 1\t" in text


def test_the_script_exits_2_on_an_unknown_machine_or_bad_judgments_and_5_on_a_stale_suite(repo, script):
    repo, results, _ = repo
    proc = script("--results-dir", str(results), "nope", cwd=repo)
    assert proc.returncode == 2 and "no results for nope" in proc.stderr and MACHINE in proc.stderr
    bad = repo / "bad.toml"
    bad.write_text("[[judgment]]\nbenchmarks = 3\n")
    proc = script("--results-dir", str(results), "--judgments", str(bad), cwd=repo)
    assert proc.returncode == 2 and "`benchmarks` must be" in proc.stderr
    _benchmarks_json(results, OLD)
    before = {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()}
    proc = script("--results-dir", str(results), cwd=repo)
    assert proc.returncode == 5 and "regenerate it first" in proc.stderr
    assert {p.name: p.read_bytes() for p in (results / MACHINE).iterdir()} == before


def test_retire_moves_only_judged_changed_entries_into_the_archive_and_loses_nothing(repo, tmp_path):
    repo, results, versions = repo
    path = next((results / MACHINE).glob("*-existing-py.json"))
    before = json.loads(path.read_text())
    name = "bench_m.Edited.time_c"
    changed = vm.Judgment((name,), (_sha(OLD, name),), None, False, "other inputs")
    archive = tmp_path / "retired"
    written = vm.retire(vm.plan(str(results), str(repo), [MACHINE], [changed]), str(results), str(archive))
    target = archive / MACHINE / path.name
    assert sorted(written) == sorted([str(path), str(target)])
    after, archived = json.loads(path.read_text()), json.loads(target.read_text())
    assert name not in after["results"] and archived["results"] == {name: before["results"][name]}
    assert {**after["results"], **archived["results"]} == before["results"]
    assert archived["commit_hash"] == before["commit_hash"] and archived["params"] == before["params"]
    assert Results.load(str(target)).get_all_result_keys() == {name}  # still an asv result file
