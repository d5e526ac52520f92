"""The null-run sample (asvtools.bench_plan.NULL_RUN_POINTS) as the gate sees it: its points from the
suite's metadata, one asv `--bench` regex for `rlperf gate`, and how many points a box of N cores runs.

A point whose `threads` parameter is above the box's cores skips itself in the suite (envs.cases.skip_reason,
envs.noise.cases.skip_reason), so the count per core count is the sample's size on that box; the points
are read from `benchmarks.json` (asv's discovery, committed with the results), never re-declared here.
"""

from __future__ import annotations

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


def counts(plan: Plan, benchmarks: dict[str, dict], cores: int) -> dict[str, int]:
    """{suite: points a box of `cores` runs}, in the sample's order."""
    out: dict[str, int] = {}
    for p in plan.run:
        out.setdefault(suite(p), 0)
        out[suite(p)] += runs_on(p, benchmarks, cores)
    return out


__all__ = ["SAMPLE", "SUITES", "bench_regex", "counts", "load_benchmarks", "runs_on", "sample_plan", "suite",
           "threads"]
