"""Synthetic asv results for gate tests: a two-commit git repository and result files written in asv's
own format (api version 2), so the CLI can be driven end to end without running asv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

MACHINE = "synthetic-box"
HOST = {"machine": MACHINE, "arch": "x86_64", "cpu": "Intel(R) Xeon(R) Processor", "num_cpu": "2",
        "os": "Linux 6.18.44", "ram": "25276063744", "gpu": "none", "gpu_count": "0", "gpu_memory": "0",
        "driver": "none"}
PYTHON = {"python": "/opt/venv/bin/python", "numba": "0.68.1", "numpy": "2.4.6", "torch": "2.13.0+cpu",
          "cuda": "none"}
COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]


def git_repo(path: Path) -> tuple[Path, str, str]:
    """A repository with two empty commits; returns (repo, base sha, head sha)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main")
    shas = []
    for message in ("base", "head"):
        git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", message)
        shas.append(git("rev-parse", "HEAD"))
    return path, shas[0], shas[1]


def spread(center: float, n: int = 10) -> list[float]:
    return [center * (1 + 0.001 * i) for i in range(n)]


def bench(value, *, samples=None, version="v1") -> dict:
    """One unparameterised benchmark's stored result (value None: failed; NaN: skipped)."""
    return {"value": value, "samples": samples, "version": version}


def write_results(results_dir: Path, sha: str, benchmarks: dict[str, dict], *, env: str = "existing-py",
                  host: dict | None = None, python: dict | None = None) -> Path:
    """One asv result file for `sha`, plus machine.json and (when there is none) a benchmarks.json naming its
    benchmarks, as asv writes them; `host`/`python` override the params."""
    params = {**HOST, **(host or {}), **PYTHON, **(python or {})}
    folder = results_dir / params["machine"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "machine.json").write_text(json.dumps({**{k: params[k] for k in HOST}, "version": 1}))
    results = {}
    for name, b in benchmarks.items():
        samples = b["samples"]
        v = b["value"]
        results[name] = [[v], [], b["version"], 0, 1.0, [v], [v], [v], [v], [1],
                         [len(samples) if samples else 1], [samples], None]
    doc = {"commit_hash": sha, "env_name": env, "date": 0, "params": params, "python": params["python"],
           "requirements": {}, "env_vars": {}, "result_columns": COLUMNS, "results": results,
           "durations": {}, "version": 2}
    path = folder / f"{sha[:8]}-{env}.json"
    path.write_text(json.dumps(doc))
    if not (results_dir / "benchmarks.json").exists():
        write_benchmarks_json(results_dir, {name: {"version": b["version"]} for name, b in benchmarks.items()})
    return path


def write_benchmarks_json(results_dir: Path, meta: dict[str, dict]) -> None:
    (results_dir / "benchmarks.json").write_text(json.dumps({**meta, "version": 2}))
