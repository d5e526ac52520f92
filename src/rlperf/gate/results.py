"""asv's results folder -> flat points `name(params) -> Point`, via asv's own Results loader.

Each result file is loaded explicitly (asv's iterators log and skip a malformed file, which would
turn an unreadable result into silent coverage loss); any read error is an InfrastructureError.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass

from asv import util as asv_util
from asv.commands.compare import unroll_result
from asv.results import Results

from rlperf.gate.exitcodes import InfrastructureError


@dataclass(frozen=True)
class Point:
    """One measured parameter combination of one benchmark on one commit."""

    key: str  # asv benchmark name, e.g. bench_env.Kernels.time_fused
    name: str  # with parameters, e.g. bench_env.Kernels.time_fused('walk', 4096)
    value: float | None  # None: failed; NaN: skipped (n/a)
    stats: dict | None
    samples: list | None
    version: str | None
    env: str
    stderr: str = ""
    params: tuple[str, ...] = ()  # asv's repr of each parameter value, e.g. ("'g1_walk_flat'", "4096")

    @property
    def failed(self) -> bool:
        return self.value is None

    @property
    def skipped(self) -> bool:
        return self.value is not None and math.isnan(self.value)

    @property
    def measured(self) -> bool:
        return self.value is not None and not math.isnan(self.value)


def _result_files(results_dir: str, machine: str, sha: str) -> list[str]:
    folder = os.path.join(results_dir, machine)
    if not os.path.isdir(folder):
        return []
    prefix = sha[:8] + "-"
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if f.startswith(prefix) and f.endswith(".json"))


def has_results(results_dir: str, machine: str, sha: str) -> bool:
    """Whether any result file of `sha` exists for `machine` (what decides --run in auto mode)."""
    return bool(_result_files(results_dir, machine, sha))


def load_points(results_dir: str, machine: str, sha: str) -> dict[tuple[str, str], Point]:
    """All points of `sha` on `machine`, keyed by (env name, point name); {} when none are stored."""
    points: dict[tuple[str, str], Point] = {}
    for path in _result_files(results_dir, machine, sha):
        try:
            result = Results.load(path, machine_name=machine)
        except (asv_util.UserError, OSError, ValueError, KeyError) as exc:
            raise InfrastructureError(f"unreadable asv result {path}: {exc}") from exc
        if result.commit_hash[:len(sha)] != sha[:len(result.commit_hash)]:
            continue  # an 8-character prefix collision with another commit
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            rows = unroll_result(key, params, result.get_result_value(key, params),
                                 result.get_result_stats(key, params), result.get_result_samples(key, params))
            stderr = (result.stderr.get(key) or "").strip()
            for (name, value, stats, samples), combo in zip(rows, itertools.product(*params)):
                points[(result.env_name, name)] = Point(
                    key=key, name=name, value=value, stats=stats, samples=samples,
                    version=result.benchmark_version.get(key), env=result.env_name, stderr=stderr,
                    params=tuple(combo))
    return points


def load_benchmark_meta(results_dir: str) -> dict[str, dict]:
    """benchmarks.json (the last run's suite): unit, type and custom attributes such as `direction`."""
    path = os.path.join(results_dir, "benchmarks.json")
    if not os.path.isfile(path):
        return {}
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"unreadable {path}: {exc}") from exc
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def pair_envs(base: dict, head: dict) -> dict[str, str]:
    """base env -> head env. Same names pair up; one env on each side pairs even if the names differ
    (e.g. the same prepared Python at two paths), which the report states."""
    base_envs, head_envs = {e for e, _ in base}, {e for e, _ in head}
    if len(base_envs) == 1 and len(head_envs) == 1:
        return {next(iter(base_envs)): next(iter(head_envs))}
    return {e: e for e in base_envs}


__all__ = ["Point", "has_results", "load_benchmark_meta", "load_points", "pair_envs"]
