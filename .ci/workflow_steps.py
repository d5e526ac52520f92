"""Run gate.yml's jobs here the way a runner would, so a broken step fails CI before the first real PR.

    python3 .ci/workflow_steps.py [--bench REGEX] [--keep]

Two local commits (HEAD and a commit on top of it that changes nothing measurable) play base and head of
a same-repository PR. Each job of the `xeon` matrix leg runs in its own fresh clone, in the workflow's
order (base: the base's record; head: base and head interleaved, passes kept; verdict: the kept passes
judged under the base's record), with the workflow's env and `if:` conditions evaluated by gha_expr. `uses:`
steps are stood in for locally (and $RUNNER_TEMP by a folder per job): checkout = clone + checkout of `ref`,
upload/download-artifact = copies in a local artifact folder, setup-python = a fresh virtualenv (the verdict job's `python`),
github-script (the guard's review lookup, which passes a same-repository PR without one, and the PR
comment) is skipped with a note. The `gpu` leg needs a GPU runner and is not run.
Exit status: 0 when every job that should run did and ended with the status the workflow expects
(the gate exits 0 on a null change), else 1. One exception: a verdict job whose only failure is the gate's
exit 1 (a regression verdict) on the null change passes with a printed note. That is a false alarm of the
runner's noise: on a shared 2-vCPU box one pass ratio of the single gated point reached x1.97. How often it
happens is what `rlperf gate-power` measures, over many trials. Any other gate exit (2-6), a missing
verdict or a failed step fails this check.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gha_expr import evaluate, substitute  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "gate.yml"
REPO = "rlperf/rlperf"
# One cheap, gated point keeps a full base -> head -> verdict pass to a few minutes on 2 cores.
DEFAULT_BENCH = r"^bench_env\.EnvFused\.time_fused\('probe', 512, 1\)"


def sh(cmd: list[str], cwd: Path | str, **kw) -> str:
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True, **kw).stdout.strip()


def make_commits(work: Path) -> tuple[Path, str, str]:
    """A clone of this checkout with a null commit on top: (origin path, base sha, head sha)."""
    origin = work / "origin"
    sh(["git", "clone", "--quiet", "--no-local", str(ROOT), str(origin)], work)
    base = sh(["git", "rev-parse", "HEAD"], origin)
    (origin / "NULL_CHANGE.txt").write_text("a change that nothing measures\n")
    sh(["git", "add", "NULL_CHANGE.txt"], origin)
    sh(["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", "commit", "--quiet", "-m",
        "null change"], origin)
    return origin, base, sh(["git", "rev-parse", "HEAD"], origin)


def context(base: str, head: str, bench: str, matrix: dict, env: dict, needs: dict) -> dict:
    event = {"action": "synchronize",
             "pull_request": {"number": 1, "base": {"sha": base, "repo": {"full_name": REPO}},
                              "head": {"sha": head, "repo": {"full_name": REPO}}, "labels": []}}
    return {"github": {"event_name": "pull_request", "repository": REPO, "event": event, "ref": "refs/pull/1/merge"},
            "inputs": {}, "vars": {"RLPERF_GATE_BENCH": bench}, "matrix": matrix, "env": env, "needs": needs}


class Job:
    """One job of one matrix leg, run in `workspace`."""

    def __init__(self, name: str, spec: dict, ctx: dict, workspace: Path, artifacts: Path, origin: Path, log):
        self.name, self.spec, self.ctx, self.ws, self.artifacts, self.origin, self.log = \
            name, spec, ctx, workspace, artifacts, origin, log
        self.env = dict(ctx["env"])
        for key, value in spec.get("env", {}).items():
            self.env[key] = substitute(str(value), {**ctx, "env": self.env})
        self.ctx = {**ctx, "env": self.env}
        self.summary = workspace.parent / f"{name}-summary.md"
        self.bin = None  # a virtualenv's bin folder put first on PATH (setup-python)

    def _with(self, step: dict) -> dict:
        return {k: substitute(str(v), self.ctx) for k, v in step.get("with", {}).items()}

    def uses(self, step: dict) -> None:
        action, args = step["uses"].split("@")[0], self._with(step)
        if action == "actions/checkout":
            sh(["git", "clone", "--quiet", "--no-local", str(self.origin), str(self.ws)], self.ws.parent)
            sh(["git", "checkout", "--quiet", args["ref"]], self.ws)
        elif action == "actions/setup-python":
            venv = self.ws.parent / f"{self.name}-python"
            sh([sys.executable, "-m", "venv", str(venv)], self.ws.parent)
            self.bin = venv / "bin"
        elif action == "actions/upload-artifact":
            dest = self.artifacts / args["name"]
            if dest.exists():
                raise RuntimeError(f"artifact {args['name']} exists: uploads are immutable")
            src = self.ws / args["path"]
            if src.exists():
                shutil.copytree(src, dest)
            elif args.get("if-no-files-found") == "error":
                raise RuntimeError(f"{self.name}: nothing at {args['path']} to upload")
        elif action == "actions/download-artifact":
            names = sorted(Path(p).name for p in glob.glob(str(self.artifacts / args.get("pattern", args.get("name", ""))))) \
                if "pattern" in args else [args["name"]]
            for name in names:
                if not (self.artifacts / name).exists():
                    raise RuntimeError(f"{self.name}: no artifact {name}")
                dest = self.ws / args["path"] / (name if "pattern" in args else "")
                shutil.copytree(self.artifacts / name, dest, dirs_exist_ok=True)
        elif action == "actions/github-script":
            self.log(f"  [{self.name}] skipped here: {step.get('name', action)} (needs GitHub's API)")
        else:
            raise RuntimeError(f"no local stand-in for {action}")

    def run(self) -> bool:
        self.ws.mkdir(parents=True)
        ok = True
        for step in self.spec["steps"]:
            cond = step.get("if")
            if cond and not evaluate(cond, {**self.ctx, "job": {"status": "success" if ok else "failure"}}):
                continue
            if not ok and not (cond and "always()" in cond):
                continue
            label = step.get("name", step.get("uses", "run"))
            self.log(f"  [{self.name}] {label}")
            try:
                if "uses" in step:
                    self.uses(step)
                    continue
                temp = self.ws.parent / f"{self.name}-runner-temp"  # the runner's per-job temp folder
                temp.mkdir(exist_ok=True)
                env = {**os.environ, **self.env, "GITHUB_STEP_SUMMARY": str(self.summary), "CI": "true",
                       "RUNNER_TEMP": str(temp)}
                if self.bin:
                    env["PATH"] = f"{self.bin}{os.pathsep}{env['PATH']}"
                proc = subprocess.run(["bash", "-eo", "pipefail", "-c", substitute(step["run"], self.ctx)],
                                      cwd=self.ws, env=env, capture_output=True, text=True)
                if proc.returncode != 0:
                    self.log(proc.stdout[-4000:] + proc.stderr[-4000:])
                    raise RuntimeError(f"exit {proc.returncode}")
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                if step.get("continue-on-error"):
                    self.log(f"  [{self.name}] {label}: {exc} (continue-on-error)")
                    continue
                self.log(f"  [{self.name}] FAILED {label}: {exc}")
                ok = False
        return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default=DEFAULT_BENCH, help="the gate's --bench (vars.RLPERF_GATE_BENCH)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    log = lambda line: print(line, flush=True)  # noqa: E731
    workflow = yaml.safe_load(WORKFLOW.read_text())
    work = Path(tempfile.mkdtemp(prefix="rlperf-workflow-"))
    try:
        origin, base, head = make_commits(work)
        artifacts = work / "artifacts"
        artifacts.mkdir()
        log(f"workflow_steps: base {base[:12]}, head {head[:12]} (null change), in {work}")
        results: dict[str, str] = {}
        top_env = {}
        for name, spec in workflow["jobs"].items():
            matrix = next((m for m in spec.get("strategy", {}).get("matrix", {}).get("include", [])
                           if m["runner"] == "xeon"), {})
            needs = [spec["needs"]] if isinstance(spec.get("needs"), str) else spec.get("needs", [])
            ctx = context(base, head, args.bench, matrix, {}, {n: {"result": results.get(n, "skipped")} for n in needs})
            top_env = {k: substitute(str(v), {**ctx, "env": top_env}) for k, v in workflow.get("env", {}).items()}
            ctx["env"] = top_env
            cond = spec.get("if")
            blocked = any(results.get(n) != "success" for n in needs) and not (cond and "always()" in cond)
            if blocked or (cond and not evaluate(cond, ctx)):
                results[name] = "skipped"
                log(f"job {name}: skipped")
                continue
            log(f"job {name} ({spec['runs-on']}, matrix {matrix or '-'})")
            ok = Job(name, spec, ctx, work / name / "ws", artifacts, origin, log).run()
            results[name] = "success" if ok else "failure"
            log(f"job {name}: {results[name]}")
        expected = {"base": "success", "head": "success", "verdict": "success", "comment": "success"}
        bad = {n: r for n, r in results.items() if r != expected.get(n, "success")}
        verdict_md = work / "verdict" / "ws" / "out" / "gate.md"
        if verdict_md.is_file():
            log(verdict_md.read_text()[:3000])
        verdict_json = verdict_md.with_suffix(".json")
        if verdict_json.is_file():  # the per-pass ratios, which the folded table of unchanged points omits
            for f in json.loads(verdict_json.read_text())["findings"]:
                log(f"  {f['status']}: {f['name']} ratio {f['ratio']} {f['method']} {f['detail']}")
        if set(bad) == {"verdict"} and verdict_json.is_file() and json.loads(verdict_json.read_text())["exit_code"] == 1:
            # The steps all ran and the gate gave a verdict: a regression verdict on a null change is a false
            # alarm of the noise band (the per-pass ratios above show it), a statistical property that
            # `rlperf gate-power` measures over many trials; one CI run cannot assert it without flaking.
            log("workflow_steps: NOTE the null change was judged a regression (gate exit 1): a false alarm of "
                "this box's noise, not a broken step; every step ran and the verdict is a typed one")
            bad = {}
        log(f"workflow_steps: {results}")
        return 1 if bad else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
