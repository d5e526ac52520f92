"""Exit codes that never lie: a verdict that compared nothing, corrupt values, a dirty working tree, a
missing benchmarks.json, unsafe machine names, where results are read and written, the reproduce line.

asv never runs: result files are written in asv's format (tests/gate_fixtures.py) and `--run`'s asv
runs are replaced by a writer of such files (the worktree preparation itself is real).
"""

from __future__ import annotations

import json
import math
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.gate_fixtures import MACHINE, bench, spread, write_benchmarks_json, write_results
from rlperf.asvtools import fingerprint, run_commit
from rlperf.cli import main
from rlperf.gate.exitcodes import GateExit

NAME = "b.S.time_x"
FP = {"schema": fingerprint.SCHEMA, "static": {"cpu_flags_sha256": "abc"}, "measured": {}}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def s(tmp_path, monkeypatch):
    """A repository whose two commits carry a file the fake asv reads (speed.txt: the measured time)
    and an asv.conf.json with results_dir results/asv; head is checked out and clean."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "asv.conf.json").write_text(json.dumps({"version": 1, "results_dir": "results/asv"}))
    (repo / "keep.txt").write_text("tracked\n")
    (repo / ".gitignore").write_text("ignored/\n")
    shas = []
    for speed in ("1.0", "1.0"):
        (repo / "speed.txt").write_text(speed)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"speed {speed}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    config = tmp_path / "gate.toml"
    config.write_text("[gate]\nfactor = 1.10\npasses = 1\n")
    monkeypatch.setattr(fingerprint, "fingerprint", lambda: FP)
    monkeypatch.delenv("RLPERF_MACHINE", raising=False)
    return {"tmp": tmp_path, "repo": repo, "base": shas[0], "head": shas[1], "config": config,
            "results": tmp_path / "results", "out": tmp_path / "out"}


def gate(s, *extra, results: bool = True, head: str | None = None) -> int:
    argv = ["gate", "--repo", str(s["repo"]), "--base", s["base"], "--head", head or s["head"], "--machine", MACHINE,
            "--config", str(s["config"]), "--out-json", str(s["out"] / "v.json"), "--out-md", str(s["out"] / "v.md"),
            *(["--results-dir", str(s["results"])] if results else []), *extra]
    return main(argv)


def verdict(s) -> dict:
    return json.loads((s["out"] / "v.json").read_text())


def store(s, base: dict, head: dict, folder: Path | None = None) -> None:
    write_results(folder or s["results"], s["base"], base)
    write_results(folder or s["results"], s["head"], head)


def point(value, samples=None) -> dict:
    return {NAME: bench(value, samples=spread(value) if samples is None else samples)}


def fake_asv(monkeypatch, values=None, *, skip=False):
    """Each asv run stores NAME: the time in the prepared worktree's speed.txt (or values[sha]), or NaN."""
    def run_prepared(commit, *, machine, results_dir, fallback_conf, bench=None, quick=False, echo=None,
                     suite_dir=None):
        value = math.nan if skip else float((Path(commit.worktree) / "speed.txt").read_text())
        value = (values or {}).get(commit.sha, value)
        write_results(Path(results_dir), commit.sha, {NAME: bench_(value)})
        write_benchmarks_json(Path(results_dir), {NAME: {"unit": "seconds", "version": "v1"}})
        return 0

    def bench_(value):
        return bench(value, samples=None if math.isnan(value) else spread(value))

    monkeypatch.setattr(run_commit, "run_prepared", run_prepared)


# --- 1. a verdict that compared nothing ----------------------------------------------------------------

def test_a_selection_skipped_on_both_commits_is_not_a_pass(s):
    store(s, {NAME: bench(math.nan), "b.S.time_y": bench(math.nan)}, {NAME: bench(math.nan), "b.S.time_y": bench(math.nan)})
    assert gate(s, "--no-run") == GateExit.INFRASTRUCTURE
    error = verdict(s)["errors"][0]
    assert "nothing compared" in error and "2 measured on neither commit" in error


def test_a_run_that_measured_nothing_on_either_commit_exits_5(s, monkeypatch):
    """The CUDA-less box: `--run --bench '^bench_replay.ReplayGpuSample'` skipped every point on both sides."""
    fake_asv(monkeypatch, skip=True)
    assert gate(s, "--run", "--passes", "1") == GateExit.INFRASTRUCTURE
    assert "nothing compared" in verdict(s)["errors"][0]


def test_measured_on_base_but_not_on_head_stays_coverage_loss(s):
    store(s, point(1.0), {NAME: bench(math.nan)})
    assert gate(s, "--no-run") == GateExit.COVERAGE_LOSS
    assert verdict(s)["errors"] == []


def test_points_new_on_head_alone_compare_nothing(s):
    store(s, {"b.S.time_other": bench(math.nan)}, point(1.0))
    assert gate(s, "--no-run") == GateExit.INFRASTRUCTURE
    assert "1 measured on head only" in verdict(s)["errors"][0]


# --- 2. corrupt values --------------------------------------------------------------------------------

@pytest.mark.parametrize("base, head, what", [
    (point(1.0), point(0.0, samples=spread(1.98)), "a time of 0.0"),  # once "improved"
    (point(1.0), point(-1.98), "a time of -1.98"),  # once "improved"
    (point(math.inf, samples=spread(1.0)), point(1.98), "an infinite value"),  # once "improved"
    (point(1.0), point(math.inf, samples=spread(1.98)), "an infinite value"),  # once exit 1
    (point(1.0), point(0.5, samples=[0.5, math.nan, 0.5, 0.5, 0.5, 0.5, 0.5]), "a non-finite sample"),
])
def test_corrupt_values_exit_5_naming_the_file_and_the_point(s, base, head, what):
    store(s, base, head)
    assert gate(s, "--no-run") == GateExit.INFRASTRUCTURE
    error = verdict(s)["errors"][0]
    side = s["base"] if base[NAME]["value"] != 1.0 else s["head"]
    assert what in error and NAME in error and f"{MACHINE}/{side[:8]}-" in error


def test_a_corrupt_value_in_a_run_pass_exits_5(s, monkeypatch):
    fake_asv(monkeypatch, {s["head"]: 0.0})
    assert gate(s, "--run", "--passes", "1") == GateExit.INFRASTRUCTURE
    assert "a time of 0.0" in verdict(s)["errors"][0]


def test_a_zero_track_value_is_a_value_not_corruption(s):
    """A fully hidden replay wait reads 0 ms: only `time_` points must be above zero."""
    wait = {"b.S.track_wait_ms": bench(0.0)}
    store(s, {**point(1.0), **wait}, {**point(1.0), **wait})
    assert gate(s, "--no-run") == GateExit.OK


TRACK = "b.S.track_ms"


@pytest.mark.parametrize("base, head, what", [
    (2.0, -0.5, "a negative value (base 2, head -0.5)"),  # once "improved" (ratio -0.25)
    (-1.0, -2.0, "a negative value (base -1, head -2)"),  # once a x2 "regression", though head is lower
    (-1.0, -0.5, "a negative value (base -1, head -0.5)"),  # once "improved", though head is higher
    (0.0, 5.0, "a zero base (base 0, head 5)"),  # once an infinite "regression" of a 0.0 ms wait
    (5.0, 0.0, "a zero head (base 5, head 0)"),  # once "improved" (ratio 0)
])
def test_a_track_value_no_ratio_can_judge_exits_5_naming_the_point(s, base, head, what):
    """A lower-is-better `track_` point: a negative value or a lone zero makes head/base meaningless."""
    store(s, {**point(1.0), TRACK: bench(base)}, {**point(1.0), TRACK: bench(head)})
    assert gate(s, "--no-run") == GateExit.INFRASTRUCTURE
    found = {f["name"]: f for f in verdict(s)["findings"]}[TRACK]
    assert found["status"] == "unjudgeable" and what in found["detail"] and found["ratio"] is None
    assert f"`{TRACK}`" in (s["out"] / "v.md").read_text() and "within_tolerance" in found["detail"]


def test_a_tolerance_point_judges_a_negative_value_absolutely(s):
    """A signed parity difference is judged on |head| <= tolerance, never by a ratio: no exit 5."""
    s["results"].mkdir()
    write_benchmarks_json(s["results"], {NAME: {"unit": "seconds"}, TRACK: {"unit": "unit", "tolerance": 1e-3}})
    store(s, {**point(1.0), TRACK: bench(2e-4)}, {**point(1.0), TRACK: bench(-5e-4)})
    assert gate(s, "--no-run") == GateExit.OK
    assert {f["name"]: f["status"] for f in verdict(s)["findings"]}[TRACK] == "ok"


# --- 3. a dirty working tree ---------------------------------------------------------------------------

def dirty(s) -> None:
    (s["repo"] / "speed.txt").write_text("2.0")  # a tracked file, edited
    (s["repo"] / "new.py").write_text("x = 1\n")  # untracked, not ignored
    (s["repo"] / "keep.txt").unlink()  # a tracked file, deleted


def test_a_dirty_head_is_refused_with_the_paths_and_the_choices(s, capsys):
    store(s, point(1.0), point(1.0))
    dirty(s)
    assert gate(s) == GateExit.USAGE  # default mode: it would benchmark the commit, not the working tree
    err = capsys.readouterr().err
    assert "keep.txt, new.py, speed.txt" in err and "stash" in err and "--allow-dirty" in err
    assert not s["out"].exists()


def test_outputs_and_ignored_files_do_not_make_the_tree_dirty(s):
    store(s, point(1.0), point(1.0))
    for rel in ("results/asv/x.json", "out/gate.md", "html/index.html", ".asv/gate-results/y", "ignored/z"):
        (s["repo"] / rel).parent.mkdir(parents=True, exist_ok=True)
        (s["repo"] / rel).write_text("x")
    assert gate(s) == GateExit.OK


def test_the_tree_is_not_checked_when_it_plays_no_part(s):
    store(s, point(1.0), point(1.0))
    dirty(s)
    assert gate(s, "--no-run") == GateExit.OK  # stored results of the commit
    assert gate(s, head=s["base"]) == GateExit.OK  # head is not the checked-out commit


def test_allow_dirty_measures_the_working_tree_and_stores_nothing(s, monkeypatch):
    fake_asv(monkeypatch)
    seen = {}
    real = run_commit.run_prepared

    def spy(commit, **kw):
        seen[commit.sha] = sorted(p.name for p in Path(commit.worktree).iterdir() if p.name != ".git")
        return real(commit, **kw)

    monkeypatch.setattr(run_commit, "run_prepared", spy)
    dirty(s)
    assert gate(s, "--run", "--allow-dirty", results=False) == GateExit.REGRESSION  # 2.0 on disk vs 1.0
    assert "new.py" in seen[s["head"]] and "keep.txt" not in seen[s["head"]] and "keep.txt" in seen[s["base"]]
    v = verdict(s)
    assert v["head_working_tree"] == ["keep.txt", "new.py", "speed.txt"] and "working tree" in v["mode"]
    assert "head is the working tree" in (s["out"] / "v.md").read_text()
    assert not (s["repo"] / ".asv").exists() and not (s["repo"] / "results").exists()


def test_a_rename_and_a_new_folder_reach_the_head_worktree(s, tmp_path):
    from rlperf.asvtools.git import overlay_uncommitted, uncommitted_paths

    _git(s["repo"], "mv", "keep.txt", "kept.txt")
    (s["repo"] / "pkg" / "sub").mkdir(parents=True)
    (s["repo"] / "pkg" / "sub" / "m.py").write_text("y = 2\n")
    changed = uncommitted_paths(str(s["repo"]))
    assert changed == ["keep.txt", "kept.txt", "pkg/sub/m.py"]
    target = tmp_path / "wt"
    _git(s["repo"], "worktree", "add", "-q", "--detach", str(target), s["head"])
    overlay_uncommitted(str(s["repo"]), str(target), changed)
    assert not (target / "keep.txt").exists() and (target / "kept.txt").read_text() == "tracked\n"
    assert (target / "pkg" / "sub" / "m.py").read_text() == "y = 2\n"


@pytest.mark.parametrize("extra", [["--allow-dirty"], ["--no-run", "--allow-dirty"],
                                   ["--run", "--allow-dirty", "--store"], ["--run", "--allow-dirty", "--keep-passes", "k"]])
def test_allow_dirty_only_where_its_results_cannot_be_kept_as_the_commits(s, extra, capsys):
    dirty(s)
    assert gate(s, *extra) == GateExit.USAGE
    assert "--allow-dirty" in capsys.readouterr().err


# --- 4. benchmarks.json -------------------------------------------------------------------------------

def test_a_results_folder_without_benchmarks_json_exits_5_with_its_path(s):
    store(s, point(1.0), point(1.0))
    (s["results"] / "benchmarks.json").unlink()
    assert gate(s, "--no-run") == GateExit.INFRASTRUCTURE
    assert str(s["results"] / "benchmarks.json") in verdict(s)["errors"][0]


# --- 5. machine names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../x", "a/b", ".hidden", "x" * 101, "tab\there"])
@pytest.mark.parametrize("mode", [["--no-run"], ["--backfill", "HEAD~1..HEAD"], ["--bisect", "HEAD~1..HEAD"]])
def test_an_unsafe_machine_name_is_a_usage_error_before_anything_is_written(s, name, mode, capsys, monkeypatch):
    monkeypatch.setattr(run_commit, "run_commit", lambda *a, **k: pytest.fail("measured under an unsafe name"))
    argv = ["gate", "--repo", str(s["repo"]), "--machine", name, "--results-dir", str(s["results"]), *mode]
    if mode[0] == "--no-run":
        argv += ["--base", s["base"], "--head", s["head"]]
    assert main(argv) == GateExit.USAGE
    assert "letters, digits" in capsys.readouterr().err
    assert not s["results"].exists()


def test_a_safe_machine_name_with_dots_and_dashes_is_accepted(s):
    """No results under that name: exit 5 (nothing stored), not 2 (a refused name)."""
    assert main(["gate", "--repo", str(s["repo"]), "--base", s["base"], "--head", s["head"], "--no-run",
                 "--machine", "cpu-2vcpu.amd_epyc", "--results-dir", str(s["results"])]) == GateExit.INFRASTRUCTURE


def test_an_unsafe_machine_name_from_the_environment_is_refused(s, monkeypatch):
    monkeypatch.setenv("RLPERF_MACHINE", "../up")
    argv = ["gate", "--repo", str(s["repo"]), "--base", s["base"], "--no-run", "--results-dir", str(s["results"])]
    assert main(argv) == GateExit.USAGE


def test_machine_write_refuses_an_unsafe_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["machine", "--write", "--name", "../x"]) == GateExit.USAGE
    assert "letters, digits" in capsys.readouterr().err and not (tmp_path / ".asv-machine.json").exists()


# --- 6. where results are read and written --------------------------------------------------------------

def test_stored_results_are_read_from_the_asv_conf_results_dir(s):
    history = s["repo"] / "results" / "asv"
    store(s, point(1.0), point(2.0), folder=history)
    assert gate(s, "--no-run", results=False) == GateExit.REGRESSION


def test_a_run_writes_into_the_ignored_local_folder_unless_stored(s, monkeypatch):
    fake_asv(monkeypatch)
    assert gate(s, "--run", results=False) == GateExit.OK
    local = s["repo"] / ".asv" / "gate-results"
    assert sorted(p.name[:8] for p in (local / MACHINE).glob("*-*.json")) == sorted([s["base"][:8], s["head"][:8]])
    assert not (s["repo"] / "results").exists()
    assert any(".asv/gate-results" in n and "--store" in n for n in verdict(s)["notes"])
    assert gate(s, "--run", "--store", results=False) == GateExit.OK
    assert len(list((s["repo"] / "results" / "asv" / MACHINE).glob("*-*.json"))) == 2


def test_store_applies_to_run_only(s, capsys):
    assert gate(s, "--no-run", "--store") == GateExit.USAGE
    assert "--store applies to --run" in capsys.readouterr().err


# --- 7. the reproduce line ------------------------------------------------------------------------------

def test_the_reproduce_line_round_trips_through_the_shell(s):
    store(s, point(1.0), point(1.0))
    regex = "^b\\.S\\.time_x|it's \"quoted\" $x"
    accept = "b.S.*'s"
    assert gate(s, "--no-run", "--bench", regex, "--accept-changed", accept) == GateExit.OK
    md = (s["out"] / "v.md").read_text()
    line = md.split("```bash\n", 1)[1].split("\n", 1)[0]
    words = shlex.split(line)
    assert words[words.index("--bench") + 1] == regex
    assert words[words.index("--accept-changed") + 1] == accept
    assert words[words.index("--results-dir") + 1] == str(s["results"])
