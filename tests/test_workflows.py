"""The GitHub workflows: schema-valid (check-jsonschema's vendored SchemaStore schema, offline),
shell steps parse with `bash -n`, and the jobs have the shape the suite relies on."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
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


def test_pr_gate_runs_on_xeon_and_gpu_with_rlperf_gate_per_commit():
    gate = _load("gate.yml")
    assert "pull_request" in gate["on"]
    job = gate["jobs"]["gate"]
    assert _runner_labels(job) == {"xeon", "gpu"}
    script = "\n".join(run for _, _, run in _runs(gate))
    assert "rlperf gate --base" in script and "--out-json" in script and "make env" in script
    assert job["steps"][0]["with"]["fetch-depth"] == 0  # worktrees of both commits need the history


def test_nightly_backfills_new_commits_and_commits_results():
    nightly = _load("nightly.yml")
    assert nightly["on"]["schedule"] and nightly["permissions"]["contents"] == "write"
    assert _runner_labels(nightly["jobs"]["nightly"]) == {"xeon", "gpu"}
    script = "\n".join(run for _, _, run in _runs(nightly))
    assert "rlperf gate --backfill" in script and "git push" in script


def test_publish_builds_the_asv_site_for_pages():
    publish = _load("publish.yml")
    assert publish["permissions"]["pages"] == "write"
    steps = publish["jobs"]["build"]["steps"] + publish["jobs"]["deploy"]["steps"]
    uses = {s.get("uses", "").split("@")[0] for s in steps}
    assert {"actions/upload-pages-artifact", "actions/deploy-pages"} <= uses
    assert any("asv publish" in s.get("run", "") for s in steps)
