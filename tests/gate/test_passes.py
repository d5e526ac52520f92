"""`--run --keep-passes DIR` and `--no-run --passes-from DIR`: interleaved passes kept by one job, judged by
another under the base's own record (gate.yml's head and verdict jobs), on fabricated asv results.

asv never runs here: the worktree/overlay preparation and each asv run are replaced by a writer of result
files in asv's format (tests/gate_fixtures.py), with a chosen value per side and pass.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path

import pytest

from tests.gate_fixtures import MACHINE, bench, git_repo, spread, write_benchmarks_json, write_results
from rlperf.asvtools import fingerprint, run_commit
from rlperf.cli import main
from rlperf.gate import flow, passdir
from rlperf.gate.exitcodes import GateExit, InfrastructureError, SuiteImportError

FP = {"schema": fingerprint.SCHEMA, "static": {"cpu_flags_sha256": "abc", "kernel": "6.18.44"}, "measured": {}}
NAME = "b.S.time_x"


@pytest.fixture
def s(tmp_path, monkeypatch):
    repo, base, head = git_repo(tmp_path / "repo")
    config = tmp_path / "gate.toml"
    config.write_text("[gate]\nfactor = 1.10\npasses = 3\n")
    monkeypatch.setattr(fingerprint, "fingerprint", lambda: FP)
    return {"tmp": tmp_path, "repo": repo, "base": base, "head": head, "config": config,
            "keep": tmp_path / "passes", "record": tmp_path / "record", "out": tmp_path / "out"}


def fake_asv(monkeypatch, s, values: dict[str, list[float]], *, extra_head=None, fail=None):
    """Each pass stores values[side][pass] for NAME; fail=(side, pass, exception) raises instead."""
    @contextlib.contextmanager
    def prepared(repo, sha, echo=None):
        yield run_commit.PreparedCommit(sha=sha, worktree=str(repo), env={})

    def run_prepared(commit, *, machine, results_dir, fallback_conf, bench=None, quick=False, echo=None,
                     suite_dir=None):
        folder, sha = os.path.basename(results_dir), commit.sha
        index = int(folder.rsplit("-", 1)[1]) if folder.startswith("pass-") else 0  # else: one run (auto mode)
        side = "base" if sha == s["base"] else "head"
        if fail and fail[:2] == (side, index):
            raise fail[2](sha)
        points = {NAME: _bench(values[side][index])}
        if side == "head" and extra_head:
            points.update(extra_head)
        write_results(Path(results_dir), sha, points)
        write_benchmarks_json(Path(results_dir), {NAME: {"unit": "seconds", "version": "v1"}})
        return 0

    monkeypatch.setattr(run_commit, "prepared_commit", prepared)
    monkeypatch.setattr(run_commit, "run_prepared", run_prepared)


def _bench(value: float, version: str = "v1") -> dict:
    return bench(value, samples=spread(value), version=version)


def record(s, value: float = 1.0, *, version: str = "v1", host=None, extra=None, fp=FP) -> None:
    """The trusted base record (the base job's artifact): base results, benchmarks.json, fingerprint."""
    write_results(s["record"], s["base"], {NAME: _bench(value, version), **(extra or {})},
                  env="existing-py-base-checkout", host=host)
    write_benchmarks_json(s["record"], {NAME: {"unit": "seconds", "version": version}})
    if fp:
        fingerprint.store(str(s["record"]), MACHINE, s["base"], fp)


def gate(s, *extra, base=None, head=None, results=None, out=True) -> int:
    argv = ["gate", "--repo", str(s["repo"]), "--base", base or s["base"], "--head", head or s["head"],
            "--machine", MACHINE, "--config", str(s["config"]), "--results-dir", str(results or s["tmp"] / "results"),
            *extra]
    if out:
        argv += ["--out-json", str(s["out"] / "v.json"), "--out-md", str(s["out"] / "v.md")]
    return main(argv)


def measure(s, *extra) -> int:
    return gate(s, "--run", "--keep-passes", str(s["keep"]), *extra)


def judge(s, *extra, folder=None) -> int:
    return gate(s, "--no-run", "--passes-from", str(folder or s["keep"]), *extra, results=s["record"])


def verdict(s) -> dict:
    return json.loads((s["out"] / "v.json").read_text())


def finding(s) -> dict:
    return {f["name"]: f for f in verdict(s)["findings"]}[NAME]


def no_outputs(s) -> bool:
    return not s["out"].exists() or not any(s["out"].iterdir())


# --- the round trip ----------------------------------------------------------------------------------

def test_kept_passes_have_the_layout_of_asv_results_folders_and_a_manifest(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0, 1.0, 1.0], "head": [1.0, 1.0, 1.0]})
    assert measure(s) == GateExit.OK
    keep = s["keep"]
    assert sorted(p.name for p in keep.iterdir()) == ["pass-0", "pass-1", "pass-2", "passes.json"]
    for k in range(3):
        folder = keep / f"pass-{k}"
        assert (folder / "benchmarks.json").is_file() and (folder / MACHINE / "machine.json").is_file()
        assert sorted(p.name[:8] for p in (folder / MACHINE).glob("*-*.json")) == sorted([s["base"][:8], s["head"][:8]])
    doc = json.loads((keep / "passes.json").read_text())
    assert doc["schema"] == passdir.SCHEMA and doc["import_failure"] is None
    assert (doc["base"], doc["head"], doc["machine"]) == (s["base"], s["head"], MACHINE)
    assert doc["order"] == ["base,head", "head,base", "base,head"] and doc["fingerprint"] == FP
    assert not [p for p in s["tmp"].iterdir() if p.name.startswith(".passes")]  # no temp folder left
    assert oct(keep.stat().st_mode & 0o777) == "0o755"


def test_a_null_change_with_one_slow_pass_passes_on_the_median_but_not_on_one_stored_run(s, monkeypatch):
    """The CI failure: a slow phase during one run reads as a significant regression in stored mode."""
    fake_asv(monkeypatch, s, {"base": [1.0, 1.0, 1.0], "head": [1.01, 1.3, 0.99]})
    assert measure(s) == GateExit.OK
    record(s)
    assert judge(s) == GateExit.OK
    f, v = finding(s), verdict(s)
    assert f["method"] == "median-of-3" and f["status"] == "ok" and f["detail"].count("×") == 3
    assert "stored interleaved passes" in v["mode"] and "3 pass(es)" in v["mode"]
    assert "same host" in v["host"] and "--passes-from" in (s["out"] / "v.md").read_text()
    # the same slow pass judged as one stored run per commit: 1.3x and Mann-Whitney agrees
    assert gate(s, "--no-run", results=s["keep"] / "pass-1") == GateExit.REGRESSION
    assert finding(s)["method"] == "mann-whitney"


def test_a_real_slowdown_in_every_pass_is_a_regression_both_measured_and_kept(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0, 1.0, 1.0], "head": [1.30, 1.32, 1.29]})
    assert measure(s) == GateExit.REGRESSION
    record(s)
    assert judge(s) == GateExit.REGRESSION
    assert finding(s)["status"] == "regression" and finding(s)["ratio"] == pytest.approx(1.30)


def test_directions_come_from_the_base_records_benchmarks_json(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0, 1.0, 1.0], "head": [0.7, 0.7, 0.7]})  # faster: improved if lower
    assert measure(s) == GateExit.OK
    record(s)
    write_benchmarks_json(s["record"], {NAME: {"unit": "x", "direction": "higher", "version": "v1"}})
    assert judge(s) == GateExit.REGRESSION  # a speedup that fell
    assert finding(s)["direction"] == "higher"


def test_the_base_records_version_wins_over_the_passes(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    measure(s)
    record(s, version="v0")  # the base's own job measured another benchmark version than the passes say
    assert judge(s) == GateExit.CHANGED_BENCHMARK
    assert finding(s)["status"] == "changed"
    assert any("the record's version was compared" in n for n in verdict(s)["notes"])


def test_a_point_of_the_base_record_missing_from_the_passes_is_coverage_loss(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    measure(s)
    record(s, extra={"b.S.time_y": _bench(2.0)})
    assert judge(s) == GateExit.COVERAGE_LOSS
    by_name = {f["name"]: f for f in verdict(s)["findings"]}
    assert by_name["b.S.time_y"]["status"] == "missing-on-head" and by_name[NAME]["status"] == "ok"
    assert judge(s, "--bench", "time_x") == GateExit.OK  # outside the selection: neither compared nor coverage


def test_a_head_whose_suite_does_not_import_is_kept_and_judged_3(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3},
             fail=("head", 0, lambda sha: SuiteImportError("the benchmark suite does not import", sha)))
    assert measure(s) == GateExit.BENCHMARK_FAILURE
    doc = json.loads((s["keep"] / "passes.json").read_text())
    assert doc["import_failure"]["sha"] == s["head"] and doc["order"] == []
    record(s)
    assert judge(s) == GateExit.BENCHMARK_FAILURE
    assert "does not import" in verdict(s)["failures"][0]


def test_a_base_whose_suite_does_not_import_is_infrastructure(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3},
             fail=("base", 0, lambda sha: SuiteImportError("the benchmark suite does not import", sha)))
    assert measure(s) == GateExit.INFRASTRUCTURE
    record(s)
    assert judge(s) == GateExit.INFRASTRUCTURE and "cannot be benchmarked" in verdict(s)["errors"][0]


def test_a_measurement_that_breaks_midway_keeps_nothing(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3},
             fail=("head", 1, lambda sha: InfrastructureError("asv stored no results")))
    assert measure(s) == GateExit.INFRASTRUCTURE
    assert not s["keep"].exists() and not [p for p in s["tmp"].iterdir() if p.name.startswith(".passes")]
    record(s)
    assert judge(s) == GateExit.INFRASTRUCTURE  # the verdict job then has no passes: exit 5, not a verdict
    assert "no kept interleaved passes" in verdict(s)["errors"][0]


# --- the last pass enters the results folder: merged, under its lock (rlperf.asvtools.store) ----------

def test_a_subset_run_keeps_the_points_it_did_not_measure(s, monkeypatch):
    """The lost-data bug: a `--run --bench` stored only what it measured, over the commit's whole file."""
    results = s["tmp"] / "results"
    write_results(results, s["base"], {NAME: _bench(1.0), "b.S.time_probe": _bench(7.0)})
    write_benchmarks_json(results, {NAME: {"version": "v1"}, "b.S.time_probe": {"version": "v1", "unit": "seconds"}})
    fake_asv(monkeypatch, s, {"base": [2.0] * 3, "head": [2.0] * 3})
    assert gate(s, "--run", "--bench", "time_x") == GateExit.OK
    from rlperf.gate.results import load_benchmark_meta, load_points

    stored = {name: p.value for (_, name), p in load_points(str(results), MACHINE, s["base"]).items()}
    assert stored == {NAME: 2.0, "b.S.time_probe": 7.0}
    assert load_benchmark_meta(str(results))["b.S.time_probe"]["unit"] == "seconds"


def test_results_of_another_host_are_kept_and_the_verdict_says_the_run_was_not_stored(s, monkeypatch):
    results = s["tmp"] / "results"
    path = write_results(results, s["base"], {NAME: _bench(1.0), "b.S.time_probe": _bench(7.0)},
                         host={"os": "Linux 6.8.0-49-generic"})
    before = path.read_bytes()
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    assert gate(s, "--run") == GateExit.OK  # a verdict on the code all the same
    assert path.read_bytes() == before
    assert any(n.startswith("results folder: not stored") and "params.os" in n for n in verdict(s)["notes"])


HOLD = "import sys\nfrom rlperf.asvtools import store\nwith store.locked(sys.argv[1]):\n    print(1, flush=True)\n    sys.stdin.read()\n"


@pytest.mark.parametrize("mode", ["--run", "auto"])
def test_a_results_folder_locked_by_another_writer_is_waited_for_then_exit_5(s, monkeypatch, mode):
    import subprocess
    import sys

    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    results = s["tmp"] / "results"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(results)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()
        assert gate(s, *([mode] if mode != "auto" else []), "--store-wait", "0.2") == GateExit.INFRASTRUCTURE
        assert f"locked by another writer for 0.2 s (pid {holder.pid} " in verdict(s)["errors"][0]
        assert not list(results.rglob("*.json"))  # nothing stored
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert gate(s, *([mode] if mode != "auto" else []), "--store-wait", "5") == GateExit.OK
    assert sorted(p.name[:8] for p in (results / MACHINE).glob("*-*.json")) == sorted([s["base"][:8], s["head"][:8]])
    assert len(list((results / MACHINE / "fingerprints").iterdir())) == 2


@pytest.mark.parametrize("wait", ["-1", "nan", "inf"])
def test_store_wait_must_be_seconds(s, no_measuring, wait):
    assert gate(s, "--run", "--store-wait", wait) == GateExit.USAGE
    assert no_outputs(s)


# --- bad folders: exit 2 before anything is measured, exit 5 when the passes cannot be judged --------

@pytest.fixture
def no_measuring(monkeypatch):
    monkeypatch.setattr(flow, "measure_interleaved", lambda *a, **k: pytest.fail("measured before checking"))


@pytest.mark.parametrize("make", ["file", "non-empty", "under-a-file"])
def test_keep_passes_must_be_an_absent_or_empty_folder(s, no_measuring, make):
    target = s["keep"]
    if make == "file":
        target.write_text("x")
    elif make == "non-empty":
        target.mkdir()
        (target / "old").write_text("x")
    else:
        (s["tmp"] / "afile").write_text("x")
        target = s["tmp"] / "afile" / "passes"
    assert gate(s, "--run", "--keep-passes", str(target)) == GateExit.USAGE
    assert no_outputs(s)


def test_an_empty_keep_folder_is_filled(s, monkeypatch):
    s["keep"].mkdir()
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    assert measure(s) == GateExit.OK and (s["keep"] / "passes.json").is_file()


@pytest.mark.parametrize("extra", [["--keep-passes", "k"], ["--no-run", "--keep-passes", "k"],
                                   ["--run", "--passes-from", "k"], ["--passes-from", "k", "--passes", "3"],
                                   ["--passes-from", ""], ["--run", "--keep-passes", ""]])
def test_the_flags_apply_to_their_own_mode_only(s, no_measuring, extra):
    assert gate(s, *extra) == GateExit.USAGE
    assert no_outputs(s)


def test_passes_from_a_file_is_a_usage_error(s):
    (s["tmp"] / "afile").write_text("x")
    assert judge(s, folder=s["tmp"] / "afile") == GateExit.USAGE
    assert no_outputs(s)


def _kept(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    assert measure(s) == GateExit.OK
    record(s)
    return s["keep"]


def _edit_manifest(keep: Path, **changes) -> None:
    doc = json.loads((keep / "passes.json").read_text())
    (keep / "passes.json").write_text(json.dumps({**doc, **changes}))


BROKEN = {
    "missing folder": (lambda k, s: __import__("shutil").rmtree(k), "no kept interleaved passes"),
    "no manifest": (lambda k, s: (k / "passes.json").unlink(), "no kept interleaved passes"),
    "unparsable manifest": (lambda k, s: (k / "passes.json").write_text("{not json"), "unreadable"),
    "foreign schema": (lambda k, s: _edit_manifest(k, schema="other/1"), "expected schema"),
    "swapped commits": (lambda k, s: _edit_manifest(k, base=s["head"], head=s["base"]), "not of this comparison"),
    "other machine": (lambda k, s: _edit_manifest(k, machine="elsewhere"), "not of this comparison"),
    "no passes": (lambda k, s: _edit_manifest(k, order=[]), "lists no passes"),
    "a pass folder gone": (lambda k, s: __import__("shutil").rmtree(k / "pass-2"), "holds pass folders"),
    "a pass without head": (lambda k, s: [p.unlink() for p in (k / "pass-1" / MACHINE).glob(s["head"][:8] + "-*")],
                            "no results of the head"),
    "malformed result": (lambda k, s: next((k / "pass-0" / MACHINE).glob(s["base"][:8] + "-*")).write_text("[]"),
                         "unreadable asv result"),
    "import failure of another commit": (lambda k, s: _edit_manifest(k, import_failure={"sha": "0" * 40, "message": ""}),
                                         "must name the base or head"),
}


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_passes_that_cannot_be_judged_are_infrastructure_errors(s, monkeypatch, case):
    keep = _kept(s, monkeypatch)
    breaks, message = BROKEN[case]
    breaks(keep, s)
    before = sorted(str(p) for p in s["tmp"].rglob("*"))
    assert judge(s) == GateExit.INFRASTRUCTURE
    v = verdict(s)
    assert message in v["errors"][0] and v["findings"] == []
    assert sorted(str(p) for p in s["tmp"].rglob("*")) == before  # the verdict's two files were already there


@pytest.mark.parametrize("pairs, what", [
    ([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]], "a sample time of 0.0"),  # once a head that reads infinitely fast
    ([[1.0, 1.0], [1.0, -0.5], [1.0, 1.0]], "a sample time of -0.5"),
    ([[1.0, 1.0], [math.nan, 1.0], [1.0, 1.0]], "a non-finite sample (nan)"),
    ([[1.0, 1.0], [1.0, math.inf], [1.0, 1.0]], "a non-finite sample (inf)"),
])
def test_corrupt_paired_samples_exit_5_naming_the_file_and_the_point(s, monkeypatch, pairs, what):
    """paired.json's samples pass the rule stored results pass (results.corrupt_value)."""
    keep = _kept(s, monkeypatch)
    point = {"name": NAME, "number": 1, "kind": "time", "pairs": pairs, "segments": [len(pairs)], "wall": 1.0}
    spec = {"seconds": 1.0, "block": 1}
    (keep / passdir.PAIRED).write_text(json.dumps({"schema": "rlperf.gate.paired/1", "spec": spec, "points": [point]}))
    assert judge(s) == GateExit.INFRASTRUCTURE
    error = verdict(s)["errors"][0]
    assert what in error and NAME in error and str(keep / passdir.PAIRED) in error


def test_the_passes_need_the_base_record(s, monkeypatch):
    _kept(s, monkeypatch)
    for path in (s["record"] / MACHINE).glob(s["base"][:8] + "-*.json"):
        path.unlink()
    assert judge(s) == GateExit.INFRASTRUCTURE and "no base record" in verdict(s)["errors"][0]


def test_a_record_from_another_host_is_refused_unless_allowed(s, monkeypatch):
    fake_asv(monkeypatch, s, {"base": [1.0] * 3, "head": [1.0] * 3})
    measure(s)
    record(s, host={"os": "Linux 6.8.0-49-generic"})
    assert judge(s) == GateExit.INFRASTRUCTURE
    assert "the base record and the kept passes were measured on different hosts" in verdict(s)["errors"][0]
    assert judge(s, "--allow-host-change") == GateExit.OK and "HOST CHANGED" in verdict(s)["host"]
