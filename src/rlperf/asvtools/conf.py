"""A per-run copy of asv.conf.json, so one commit's benchmarks write into the shared results folder.

asv resolves every path in its config relative to the config file and has no --results-dir flag;
the flow therefore writes a copy next to the worktree's benchmarks with absolute results/html dirs.
"""

from __future__ import annotations

import json
import os

from asv import util as asv_util

from rlperf.errors import InfrastructureError

CONF_NAME = "asv.conf.json"
RUN_CONF_NAME = ".rlperf-asv.conf.json"


def load_conf(path: str) -> dict:
    """asv.conf.json as a dict (asv allows // comments)."""
    try:
        return asv_util.load_json(path, js_comments=True)
    except (OSError, asv_util.UserError, ValueError) as exc:
        raise InfrastructureError(f"unreadable asv config {path}: {exc}") from exc


def write_run_conf(worktree: str, fallback_conf: str, results_dir: str, sha: str,
                   benchmark_dir: str | None = None) -> str:
    """Write the run config into `worktree`; the commit's own asv.conf.json is used when it has one.
    `benchmark_dir`: another suite than the commit's own (the history runs one suite over every commit)."""
    own = os.path.join(worktree, CONF_NAME)
    conf = load_conf(own if os.path.isfile(own) else fallback_conf)
    conf.update(
        repo=".",
        results_dir=os.path.abspath(results_dir),
        html_dir=os.path.abspath(os.path.join(results_dir, os.pardir, "html")),
        # a CI checkout may lack a local `main`; asv resolves `branches` even with --set-commit-hash
        branches=[sha],
    )
    conf.setdefault("benchmark_dir", "benchmarks")
    if benchmark_dir is not None:
        conf["benchmark_dir"] = os.path.abspath(benchmark_dir)
    path = os.path.join(worktree, RUN_CONF_NAME)
    with open(path, "w") as fh:
        json.dump(conf, fh, indent=2)
    return path


__all__ = ["CONF_NAME", "RUN_CONF_NAME", "load_conf", "write_run_conf"]
