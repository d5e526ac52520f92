"""asv's results folder -> flat points `name(params) -> Point`, via asv's own Results loader.

Each result file is loaded explicitly (asv's iterators log and skip a malformed file, which would
turn an unreadable result into silent coverage loss); any read error, and any number the gate cannot
compare (see corrupt_value, the one rule), is an InfrastructureError naming the file and the benchmark.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass, field

from asv import util as asv_util
from asv.commands.compare import unroll_result
from asv.results import Results

from rlperf.asvtools.stored import (HOST_KEYS, UNRECORDED, has_results, read_json_object,  # re-exported
                                    result_files)
from rlperf.errors import InfrastructureError, UsageError

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


@dataclass(frozen=True)
class CommitResults:
    """Everything stored for one commit on one machine: its points and each environment's params."""

    points: dict[tuple[str, str], Point] = field(default_factory=dict)
    envs: dict[str, dict] = field(default_factory=dict)  # env name -> asv result params


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def corrupt_value(key: str, value, samples) -> str | None:
    """Why a stored number cannot be compared (None when it can): the gate's one rule for values.

    Every value the gate judges passes here on load (stored results, every --run pass, kept passes,
    the samples of a kept paired.json: gate.paired.load).
    asv writes null for a failure and NaN for a skip (n/a), so those stay; anything else must be
    finite, or a ratio turns a regression into "improved" (head 0 or base inf) or into exit 1 (head
    inf). Samples feed the significance test: each must be finite. A `time_` benchmark is an
    elapsed time (asv's timer), so it must also be > 0; `track_` values are not sign-checked (a fully
    hidden wait reads 0 ms, a parity metric may be a signed difference): the judge refuses a ratio
    across a sign or a lone zero instead (gate.verdict.unratioable)."""
    if value is not None and math.isinf(value):
        return f"an infinite value ({value!r})"
    finite_samples = [s for s in samples or () if s is not None]
    if any(not math.isfinite(s) for s in finite_samples):
        return f"a non-finite sample ({next(s for s in finite_samples if not math.isfinite(s))!r})"
    if key.rsplit(".", 1)[-1].startswith("time_"):
        if value is not None and value <= 0:
            return f"a time of {value!r} (an elapsed time is > 0)"
        if any(s <= 0 for s in finite_samples):
            return f"a sample time of {min(finite_samples)!r} (an elapsed time is > 0)"
    return None


def _checked(path: str, key: str, name: str, value, stats, samples):
    """Reject what asv's loader lets through but the gate cannot compare: strings, lists, booleans,
    and numbers corrupt_value refuses."""
    def bad(what, got):
        return InfrastructureError(f"malformed asv result {path}: benchmark {name!r} has a non-numeric "
                                   f"{what} ({got!r}); expected a number, null (failed) or NaN (skipped)")

    if value is not None and not _is_number(value):
        raise bad("value", value)
    if samples is not None and (not isinstance(samples, list)
                                or not all(s is None or _is_number(s) for s in samples)):
        raise bad("samples entry", samples)
    if stats is not None and (not isinstance(stats, dict)
                              or not all(v is None or _is_number(v) for v in stats.values())):
        raise bad("stats entry", stats)
    value = None if value is None else float(value)
    problem = corrupt_value(key, value, samples)
    if problem:
        raise InfrastructureError(f"corrupt asv result {path}: benchmark {name!r} has {problem}; "
                                  "re-measure it (the gate compares only finite values, NaN marks a skip)")
    return value, stats, samples


def load_commit(results_dir: str, machine: str, sha: str) -> CommitResults:
    """All points of `sha` on `machine`, keyed by (env name, point name), with each env's params."""
    loaded = CommitResults()
    for path in result_files(results_dir, machine, sha):
        try:
            result = Results.load(path, machine_name=machine)
            if result.commit_hash[:len(sha)] != sha[:len(result.commit_hash)]:
                continue  # an 8-character prefix collision with another commit
            loaded.envs[result.env_name] = dict(result.params)
            for key in result.get_all_result_keys():
                params = result.get_result_params(key)
                rows = unroll_result(key, params, result.get_result_value(key, params),
                                     result.get_result_stats(key, params), result.get_result_samples(key, params))
                stderr = (result.stderr.get(key) or "").strip()
                for (name, value, stats, samples), combo in zip(rows, itertools.product(*params)):
                    value, stats, samples = _checked(path, key, name, value, stats, samples)
                    loaded.points[(result.env_name, name)] = Point(
                        key=key, name=name, value=value, stats=stats, samples=samples,
                        version=result.benchmark_version.get(key), env=result.env_name, stderr=str(stderr),
                        params=tuple(combo))
        except InfrastructureError:
            raise
        except (asv_util.UserError, OSError, ValueError, KeyError, TypeError, AttributeError,
                IndexError) as exc:
            raise InfrastructureError(f"unreadable asv result {path}: {type(exc).__name__}: {exc}") from exc
    return loaded


def load_points(results_dir: str, machine: str, sha: str) -> dict[tuple[str, str], Point]:
    """The points of load_commit(); {} when none are stored."""
    return load_commit(results_dir, machine, sha).points


def load_benchmark_meta(results_dir: str) -> dict[str, dict]:
    """benchmarks.json (the last run's suite): unit, type and custom attributes such as `direction`.

    Required: without it every point would silently read as lower-is-better with no tolerance."""
    path = os.path.join(results_dir, "benchmarks.json")
    if not os.path.isfile(path):
        raise InfrastructureError(f"no {path}: the gate reads each benchmark's direction, tolerance and unit "
                                  "from it (asv writes it beside the results of every run); copy it with the "
                                  "results, or re-run asv into this folder")
    return read_benchmark_meta(path)


def read_benchmark_meta(path: str) -> dict[str, dict]:
    """One asv benchmarks.json file, by path ({} when absent)."""
    if not os.path.isfile(path):
        return {}
    data = read_json_object(path, "benchmarks")
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def compile_bench(regex: str | None):
    """asv's --bench regex, compiled; a bad pattern is a usage error."""
    if regex is None:
        return None
    try:
        return re.compile(regex)
    except re.error as exc:
        raise UsageError(f"--bench {regex!r} is not a valid regular expression: {exc}") from None


def select(points: dict, bench) -> dict:
    """The points `--bench` selects, matched as asv matches: parameterised names with their parameters."""
    if bench is None:
        return points
    return {k: p for k, p in points.items() if bench.search(p.name)}


def python_identity(params: dict) -> dict:
    """The part of an environment's params that says which Python and packages ran the benchmarks.

    With `--python=same` asv records the interpreter's path as `python`; a path says where a venv lies
    (base and head are measured from separate checkouts), not what it holds, so it is left out and the
    package versions decide."""
    return {k: str(v) for k, v in params.items()
            if k not in HOST_KEYS and not (k == "python" and "/" in str(v))}


def pair_envs(base_envs: dict[str, dict], head_envs: dict[str, dict]) -> dict[str, str]:
    """base env -> head env with the same Python identity (same name preferred); unmatched envs are
    left out, so their points read as missing on head / new."""
    pairs = {}
    for name, params in base_envs.items():
        ident = python_identity(params)
        matches = [h for h, hp in head_envs.items() if python_identity(hp) == ident]
        if matches:
            pairs[name] = name if name in matches else sorted(matches)[0]
    return pairs


def describe_identity_mismatch(base_envs: dict[str, dict], head_envs: dict[str, dict]) -> str:
    """Which identity keys differ between the sides (for the error when no environment pairs)."""
    base = {k: v for e in base_envs.values() for k, v in python_identity(e).items()}
    head = {k: v for e in head_envs.values() for k, v in python_identity(e).items()}
    diff = sorted(k for k in set(base) | set(head) if base.get(k) != head.get(k))
    return ", ".join(f"{k}: base {base.get(k)!r}, head {head.get(k)!r}" for k in diff[:6]) or "no common key"


__all__ = ["HOST_KEYS", "UNRECORDED", "CommitResults", "Point", "compile_bench", "corrupt_value", "describe_identity_mismatch", "has_results",
           "load_benchmark_meta", "load_commit", "load_points", "pair_envs", "python_identity", "select"]
