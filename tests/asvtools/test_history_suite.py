"""One suite over many commits (rlperf.asvtools.history_suite) and `rlperf backfill`'s checks and log report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rlperf.asvtools import history_suite
from rlperf.cli import main
from rlperf.errors import UsageError
from rlperf.report import backfill_log


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, path: str, text: str) -> str:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", f"edit {path}")
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    return repo


def test_history_takes_the_last_commits_plus_every_one_that_changed_the_measured_code(repo):
    kernel = _commit(repo, "src/pkg/envs/kernel.py", "v1")
    docs = [_commit(repo, "docs/a.md", f"d{i}") for i in range(4)]
    assert history_suite.history_commits(str(repo), "main", 2, ["src/pkg/envs"]) == [docs[3], docs[2], kernel]
    assert history_suite.history_commits(str(repo), "main", 2, []) == [docs[3], docs[2]]


def test_a_suite_module_that_cannot_import_the_commits_code_is_left_out_with_its_error(tmp_path):
    suite = tmp_path / "snap" / "benchmarks"
    suite.mkdir(parents=True)
    (suite / "__init__.py").write_text("")
    (suite / "_helpers.py").write_text("X = 1\n")
    (suite / "bench_old.py").write_text("from mypkg import api\n")
    (suite / "bench_new.py").write_text("from mypkg.api import new_call\n")
    commit_code = tmp_path / "overlay" / "mypkg"
    commit_code.mkdir(parents=True)
    (commit_code / "__init__.py").write_text("")
    (commit_code / "api.py").write_text("def old_call(): pass\n")
    copy, dropped = history_suite.importable_suite(str(suite), str(tmp_path / "overlay"), str(tmp_path / "run"))
    assert history_suite.suite_modules(str(suite)) == ["bench_new", "bench_old"]
    assert history_suite.suite_modules(copy) == ["bench_old"]
    assert list(dropped) == ["bench_new"] and "new_call" in dropped["bench_new"]
    assert (Path(copy) / "_helpers.py").is_file()


def test_the_snapshot_is_the_committed_suite_not_the_working_tree(repo):
    sha = _commit(repo, "benchmarks/bench_a.py", "A = 1\n")
    (repo / "benchmarks" / "bench_a.py").write_text("A = 2\n")  # uncommitted
    with history_suite.suite_snapshot(str(repo), "HEAD") as (got, folder):
        assert got == sha and (Path(folder) / "bench_a.py").read_text() == "A = 1\n"
    assert not Path(folder).exists()


@pytest.mark.parametrize("argv, needle", [
    (["--machine", "../x"], "not a valid machine name"),
    (["--machine", "m", "--max-minutes", "0"], "--max-minutes must be > 0"),
    (["--machine", "m", "--last", "-1", "--dry-run"], "--last must be >= 0"),
])
def test_bad_input_exits_2_before_anything_runs(argv, needle, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main(["backfill", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_the_report_prints_time_per_commit_and_what_was_left_out(tmp_path, capsys, monkeypatch):
    log = tmp_path / "backfill.jsonl"
    records = [{"sha": "a" * 40, "subject": "new", "suite": "c" * 40, "selection": "history", "points": 60,
                "outcome": "stored", "exit": 0, "seconds": 150.0, "load1_before": 0.5, "load1_after": 1.0,
                "cpu_affinity": [1], "modules_left_out": {}},
               {"sha": "b" * 40, "subject": "old", "suite": "c" * 40, "selection": "history", "points": 40,
                "outcome": "stored", "exit": 0, "seconds": 90.0, "load1_before": 1.0, "load1_after": 1.0,
                "cpu_affinity": [1], "modules_left_out": {"bench_replay": "ImportError: no build"}}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main(["backfill", "--machine", "m", "--log", str(log), "--report"]) == 0
    out = capsys.readouterr().out
    assert "commits stored: 2 of 2 tried; with every module of the suite (the whole selection): 1" in out
    assert "median 150, min 150, max 150" in out  # the whole-selection commits only
    assert "bench_replay: ImportError: no build" in out


def test_a_log_line_that_is_not_a_record_is_named(tmp_path):
    log = tmp_path / "backfill.jsonl"
    log.write_text('{"sha": "a"}\n[1, 2]\n')
    with pytest.raises(UsageError, match="backfill.jsonl:2"):
        backfill_log.read_log(str(log))
