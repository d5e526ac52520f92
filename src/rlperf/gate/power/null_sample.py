"""The null-run sample (asvtools.bench_plan.NULL_RUN_POINTS) as the gate sees it: its points from the
suite's metadata, one asv `--bench` regex for `rlperf gate`, and how many points a box of N cores runs.

A point whose `threads` parameter is above the box's cores skips itself in the suite (envs.cases.skip_reason,
envs.noise.cases.skip_reason), so the count per core count is the sample's size on that box; the points
are read from `benchmarks.json` (asv's discovery, committed with the results), never re-declared here.
A benchmark that skips in its body (on the value it measured, not on the box) can skip on head where base
measured it, which exits 4 on a change of nothing: `skips_in_body` finds those in asv's stored code.
"""

from __future__ import annotations

import ast
import json

from rlperf.asvtools.bench_plan import NULL_RUN_POINTS, Plan, Point, make_plan
from rlperf.errors import UsageError

SAMPLE = "null-runs"  # its name in bench_plan.SELECTIONS
# what each benchmark class of the sample stands for in the list of CPU suites
SUITES = {
    "bench_env.EnvFused": "env kernels, fused",
    "bench_env.EnvReference": "env kernels, numpy reference",
    "bench_env.EnvSpeedup": "env speedups",
    "bench_env.EnvParity": "env parity",
    "bench_env.EnvCompile": "env compile",
    "bench_noise.NoiseGeneration": "actor noise",
    "bench_noise.ProbeInKernelNoise": "in-kernel noise",
    "bench_noise.MotionTrackingInKernelNoise": "in-kernel noise",
    "bench_replay.ReplayCpuSample": "CPU replay gathers",
    "bench_replay.ReplayPeakMemory": "CPU replay gathers",
    "bench_e2e.E2ECollectorStep": "e2e collector step",
}


def load_benchmarks(path: str) -> dict[str, dict]:
    """asv's benchmarks.json: {name: benchmark} (UsageError naming the file when it is absent or unreadable)."""
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read the suite's metadata ({exc}); give the benchmarks.json of an asv "
                         "results folder (results/asv/benchmarks.json)") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: not an asv benchmarks.json (expected an object of benchmarks)")
    return {name: b for name, b in doc.items() if isinstance(b, dict) and "name" in b}


def sample_plan(benchmarks: dict[str, dict]) -> Plan:
    """Every point of the sample the metadata knows (CUDA never: the sample is CPU only)."""
    return make_plan(list(benchmarks.values()), points=NULL_RUN_POINTS, cuda=False)


def bench_regex(plan: Plan) -> str:
    """One `--bench` regex for the whole sample: the plan's anchored per-benchmark regexes, alternated."""
    return "|".join(plan.regexes())


def threads(point: Point, benchmarks: dict[str, dict]) -> int:
    """The point's thread count (1 when the benchmark has no `threads` parameter)."""
    names = benchmarks[point.benchmark].get("param_names") or []
    return int(point.params[names.index("threads")]) if "threads" in names else 1


def runs_on(point: Point, benchmarks: dict[str, dict], cores: int) -> bool:
    """Whether a box of `cores` usable cores runs the point (more threads than cores skip)."""
    return threads(point, benchmarks) <= cores


def suite(point: Point) -> str:
    cls = point.benchmark.rsplit(".", 1)[0]
    return SUITES.get(cls, cls)


def skips_in_body(benchmark: dict) -> bool:
    """Whether the benchmark's own method (asv's `code` in benchmarks.json) raises asv's in-body skip
    (`skip_point(...)` or `SkipNotImplemented`). Such a point is n/a when the value it measured says so,
    so one commit of a pair can skip it; a skip in `setup` (threads above the box, no CUDA) is the box's
    and hits both commits alike."""
    method = benchmark["name"].rsplit(".", 1)[-1]
    try:
        tree = ast.parse(benchmark.get("code") or "")
    except SyntaxError as exc:
        raise UsageError(f"{benchmark['name']}: its code in benchmarks.json does not parse ({exc})") from None
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.name == method:
            for node in ast.walk(func):
                called = node.func if isinstance(node, ast.Call) else node.exc if isinstance(node, ast.Raise) else None
                if isinstance(called, ast.Call):
                    called = called.func
                name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
                if name in ("skip_point", "SkipNotImplemented"):
                    return True
    return False


def body_skipping(plan: Plan, benchmarks: dict[str, dict]) -> list[str]:
    """The benchmarks of the plan that skip in their body (skips_in_body), in the plan's order."""
    names = dict.fromkeys(p.benchmark for p in plan.run)
    return [name for name in names if skips_in_body(benchmarks[name])]


def counts(plan: Plan, benchmarks: dict[str, dict], cores: int) -> dict[str, int]:
    """{suite: points a box of `cores` runs}, in the sample's order."""
    out: dict[str, int] = {}
    for p in plan.run:
        out.setdefault(suite(p), 0)
        out[suite(p)] += runs_on(p, benchmarks, cores)
    return out


__all__ = ["SAMPLE", "SUITES", "bench_regex", "body_skipping", "counts", "load_benchmarks", "runs_on", "sample_plan",
           "skips_in_body", "suite", "threads"]
