"""Which benchmark points `make bench` runs: a few points per benchmark class by default, all with --full.

asv spawns one process per point (a Numba load alone costs seconds of it), so the default run picks the
points users read: 8,192 envs at 1 and 2 threads, the reference capacity 2^20, one learner task. Points
that need CUDA are left out on a host where NVML shows no visible GPU, decided once per benchmark here
instead of once per point in asv (which would spawn a process and print a skip line for each); asv's
discovery itself stays the same on every host, so `benchmarks.json` keeps the GPU benchmarks.

A plan is a list of asv `--bench` regexes, one per benchmark, each anchored to its exact point names.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from rlperf.errors import UsageError

# benchmark name or prefix (module.Class or module.Class.function) -> the points run by default, as a
# list of {param name: values}; each dict is a product, a param it does not name takes all its values.
DEFAULT_POINTS: dict[str, list[dict]] = {
    "bench_e2e.E2ECollectorStep": [{"task": ["g1_motion_tracking"]}],
    "bench_e2e.E2EIteration": [{"task": ["g1_motion_tracking"], "placement": ["host", "host-pipelined", "uva",
                                                                             "gpu", "gpu-fused-padded"]}],
    "bench_e2e.E2ELearner": [{"task": ["g1_motion_tracking"]}],
    "bench_env.EnvCompile": [{"task": ["g1_motion_tracking"]}],
    "bench_env.EnvFused": [{"num_envs": [8192], "threads": [1, 2]}],
    "bench_env.EnvParity": [{}],
    "bench_env.EnvReference": [{"num_envs": [8192]}],
    "bench_env.EnvSpeedup": [{"num_envs": [8192], "threads": [1, 2]}],
    "bench_noise.NoiseGeneration": [{"num_envs": [8192], "threads": [1]},
                                    {"variant": ["numpy-threads", "counter-numba"], "num_envs": [8192],
                                     "threads": [2]}],
    "bench_noise.ProbeInKernelNoise": [{"num_envs": [8192], "threads": [1]}],
    "bench_noise.MotionTrackingInKernelNoise": [{"num_envs": [8192], "threads": [1]}],
    "bench_replay.ReplayCpuSample": [{"capacity_exp": [20], "placement": ["host", "host-compact"], "gpus": [1]}],
    "bench_replay.ReplayPeakMemory": [{"capacity_exp": [20], "placement": ["host", "host-compact"]}],
    "bench_replay.ReplayH2D": [{"capacity_exp": [20], "placement": ["host", "host-compact"], "gpus": [1]}],
    "bench_replay.ReplayEndToEnd": [{"capacity_exp": [20], "placement": ["host", "host-pipelined", "uva"],
                                     "gpus": [1]}],
    "bench_replay.ReplayGpuSample": [{"capacity_exp": [20], "placement": ["gpu", "gpu-fused-padded", "gpu-compact"],
                                      "gpus": [1]}],
}

# The history selection: what `rlperf backfill` measures on every commit of the CPU box's history (the
# points users read across commits, docs/history.md). 1 thread throughout: on a 2-vCPU box the second
# thread has no core of its own (its points swing between two modes, docs/history.md), and the backfill
# pins itself to one core so the box's other work cannot share it. Only points a CPU box with the base install
# measures: no CUDA, no optional extra (torchrl-host, TorchRL's buffer, needs `rlperf[torchrl]` and was n/a on
# every stored commit of the CPU history). 63 points: motion tracking's reference and speedup at 32,768 envs
# (the batch its fused kernel is also tracked at) joined after the first 64 commits were stored, the
# in-kernel noise classes' whole-step ratio (track_numpy_path_over_in_kernel, both tasks) after 66: unlike
# their draws-only ratio it has a value on every commit it is measured on, so its line has no holes and
# the thresholds can read its noise from consecutive commits (a commit older than the metric lacks its key
# in noise_overhead.measure: measured again there, the point fails).
HISTORY_POINTS: dict[str, list[dict]] = {
    "bench_env.EnvFused": [{"num_envs": [512, 8192], "threads": [1]},
                           {"task": ["g1_motion_tracking"], "num_envs": [32768], "threads": [1]}],
    "bench_env.EnvReference": [{"num_envs": [512, 8192]}, {"task": ["g1_motion_tracking"], "num_envs": [32768]}],
    "bench_env.EnvSpeedup": [{"num_envs": [512, 8192], "threads": [1]},
                             {"task": ["g1_motion_tracking"], "num_envs": [32768], "threads": [1]}],
    "bench_env.EnvParity": [{}],
    "bench_env.EnvCompile": [{"task": ["g1_motion_tracking"]}],
    "bench_noise.NoiseGeneration": [{"num_envs": [8192], "threads": [1]}],
    "bench_noise.ProbeInKernelNoise": [{"num_envs": [8192], "threads": [1]}],
    "bench_noise.MotionTrackingInKernelNoise": [{"num_envs": [8192], "threads": [1]}],
    "bench_replay.ReplayCpuSample": [{"capacity_exp": [20], "placement": ["host", "host-bf16", "host-compact"],
                                      "gpus": [1]}],
    "bench_replay.ReplayPeakMemory.track_host_peak_bytes": [{"capacity_exp": [20],
                                                             "placement": ["host", "host-compact"]}],
    "bench_e2e.E2ECollectorStep": [{}],
}

# The GPU history: what `rlperf backfill --selection gpu-history` measures on every GPU-relevant commit of the
# H200 host's history (issue 22 §4). The GPU gathers at the reference capacity for every single-process
# placement (the multi-rank ones need more than one GPU), the host-to-learner replay for the three storage
# kinds (host copy, zero-copy UVA, device cache), the learner alone in eager mode only (compile and
# cuda-graphs pay torch.compile of both losses in every point's process: minutes on a cold cache, the
# rest of a commit's points together take less), and the synchronous iteration at the task's 2,048 envs
# with recorded physics for the three storage kinds at prefetch none (the whole replay fetch is exposed
# there, so a change of the gathers shows on the line; one_tick hides it by design).
GPU_SAMPLE_PLACEMENTS = ["gpu", "gpu-padded", "gpu-fused", "gpu-fused-padded", "gpu-bf16", "gpu-fused-bf16",
                         "gpu-compact", "torchrl-device", "torchrl-device-td", "gpu-compact-fused",
                         "gpu-compact-a16-fused"]
GPU_HISTORY_POINTS: dict[str, list[dict]] = {
    "bench_replay.ReplayGpuSample": [{"capacity_exp": [20], "placement": GPU_SAMPLE_PLACEMENTS, "gpus": [1]}],
    "bench_replay.ReplayEndToEnd": [{"capacity_exp": [20], "placement": ["host", "uva", "gpu-cache"], "gpus": [1]}],
    "bench_e2e.E2ELearner": [{"task": ["g1_motion_tracking"], "mode": ["eager"]}],
    "bench_e2e.E2EIteration": [{"task": ["g1_motion_tracking"], "placement": ["host", "uva", "gpu"],
                                "prefetch": ["none"]}],
}
# The null-run sample: what `rlperf gate-power nulls run` gates on a null change, night after night, to
# measure the false alarms of a whole gate run under the Xeon leg's settings (issue 25 section 4; docs/gate.md,
# "Null runs"). Every CPU suite: the env kernels fused (paired on the Xeon leg) and reference, their
# speedups, parity, one cold compile (3 fresh compiles a sample: the costliest point per pass), actor noise
# and in-kernel noise, the CPU replay gathers and the host peak at the reference capacity 2^20 (the
# placements a CPU box without torchrl measures), and the e2e collector step. Thread counts go to 16: a
# point above the box's cores skips itself, so a 2-vCPU box gates 107 of them and a 16+-core Xeon 197
# (`rlperf gate-power nulls plan` counts them from benchmarks.json). The in-kernel noise classes by track:
# their draws-only ratio (track_numpy_over_in_kernel_draws) skips itself when the draws cost nothing
# measurable, n/a on 21 of 32 stored commits for motion tracking, and a head that skips a point base
# measured exits 4; the whole-step ratio, which always has a value, stands in for it (docs/gate.md).
ALL_THREADS = [1, 2, 4, 8, 16]
NULL_RUN_POINTS: dict[str, list[dict]] = {
    "bench_env.EnvFused": [{"num_envs": [512, 8192, 32768], "threads": ALL_THREADS}],
    "bench_env.EnvReference": [{"num_envs": [512, 8192, 32768]}],
    "bench_env.EnvSpeedup": [{"num_envs": [512, 8192, 32768], "threads": ALL_THREADS}],
    "bench_env.EnvParity": [{}],
    "bench_env.EnvCompile": [{"task": ["g1_motion_tracking"]}],
    "bench_noise.NoiseGeneration": [{"variant": ["numpy", "numpy-alloc"], "threads": [1]},
                                    {"variant": ["numpy-threads", "counter-numba"], "threads": ALL_THREADS}],
    "bench_noise.ProbeInKernelNoise.track_overhead_ratio": [{"num_envs": [8192], "threads": ALL_THREADS}],
    "bench_noise.ProbeInKernelNoise.track_numpy_path_over_in_kernel": [{"num_envs": [8192], "threads": ALL_THREADS}],
    "bench_noise.MotionTrackingInKernelNoise.track_overhead_ratio": [{"num_envs": [8192], "threads": ALL_THREADS}],
    "bench_noise.MotionTrackingInKernelNoise.track_numpy_path_over_in_kernel": [{"num_envs": [8192],
                                                                                "threads": ALL_THREADS}],
    "bench_replay.ReplayCpuSample": [{"capacity_exp": [20], "placement": ["host", "host-pageable", "host-bf16",
                                                                         "host-compact", "reference-host"],
                                      "gpus": [1]}],
    "bench_replay.ReplayPeakMemory.track_host_peak_bytes": [{"capacity_exp": [20],
                                                             "placement": ["host", "host-compact"]}],
    "bench_e2e.E2ECollectorStep": [{}],
}
SELECTIONS = {"default": DEFAULT_POINTS, "history": HISTORY_POINTS, "gpu-history": GPU_HISTORY_POINTS,
              "null-runs": NULL_RUN_POINTS}

# benchmarks whose every point needs a CUDA device (each also skips itself without one, for plain asv runs)
NEEDS_CUDA = ("bench_e2e.E2EIteration", "bench_e2e.E2ELearner", "bench_replay.ReplayEndToEnd",
              "bench_replay.ReplayGpuSample", "bench_replay.ReplayH2D",
              "bench_replay.ReplayPeakMemory.track_device_peak_bytes")
NO_CUDA_REASON = "needs a CUDA device; none visible (NVML)"


@dataclass(frozen=True)
class Point:
    benchmark: str  # asv's name, e.g. bench_env.EnvFused.time_fused
    params: tuple[str, ...]  # asv's repr of each value, e.g. ("'probe'", "8192", "1"); () when unparameterised
    index: int = 0  # position in the product of the benchmark's params: asv's process name is f"{benchmark}-{index}"

    @property
    def name(self) -> str:
        """The name asv matches `--bench` against and prints: benchmark(param, param)."""
        return f"{self.benchmark}({', '.join(self.params)})" if self.params else self.benchmark


@dataclass
class Plan:
    run: list[Point] = field(default_factory=list)  # what asv runs, in asv's order
    not_run: dict[Point, str] = field(default_factory=dict)  # selected here but left out, with the reason
    total_points: int = 0  # every point of the suite

    def regexes(self) -> list[str]:
        """One anchored asv `--bench` regex per benchmark that has points to run."""
        by_bench: dict[str, list[Point]] = {}
        for p in self.run:
            by_bench.setdefault(p.benchmark, []).append(p)
        out = []
        for bench, points in by_bench.items():
            if points[0].params:
                alts = "|".join(re.escape(", ".join(p.params)) for p in points)
                out.append(f"^{re.escape(bench)}\\((?:{alts})\\)$")
            else:
                out.append(f"^{re.escape(bench)}$")
        return out


def _owner(name: str, keys) -> str | None:
    """The most specific key that is `name` or a dotted prefix of it."""
    hits = [k for k in keys if name == k or name.startswith(k + ".")]
    return max(hits, key=len) if hits else None


def points_of(benchmark: dict) -> list[Point]:
    """Every point of one discovered benchmark (asv's order: the product of its params)."""
    params = benchmark.get("params") or []
    if not params:
        return [Point(benchmark["name"], ())]
    return [Point(benchmark["name"], tuple(combo), i) for i, combo in enumerate(itertools.product(*params))]


def _in_default(point: Point, param_names: list[str], products: list[dict]) -> bool:
    values = dict(zip(param_names, point.params))
    return any(all(values.get(k) in {repr(v) for v in vs} for k, vs in product.items()) for product in products)


def make_plan(benchmarks: list[dict], *, full: bool = False, bench: str | None = None,
              cuda: bool = True, points: dict[str, list[dict]] | None = None) -> Plan:
    """The points to run: the selection's (`points`, default DEFAULT_POINTS; all with `full`), narrowed
    by the `bench` regex (matched as
    asv matches), minus those needing CUDA when `cuda` is False. A `bench` that selects nothing is a
    usage error naming what it would select with --full."""
    pattern = _compile(bench)
    selection = DEFAULT_POINTS if points is None else points
    plan = Plan()
    everything = []
    for b in sorted(benchmarks, key=lambda b: b["name"]):
        points = points_of(b)
        plan.total_points += len(points)
        key = _owner(b["name"], selection)
        for p in points:
            if pattern is not None and not pattern.search(p.name):
                continue
            everything.append(p)
            if not full and (key is None or not _in_default(p, b.get("param_names") or [], selection[key])):
                continue
            if not cuda and _owner(b["name"], NEEDS_CUDA):
                plan.not_run[p] = NO_CUDA_REASON
            else:
                plan.run.append(p)
    selected = [b for b in benchmarks if any(p.benchmark == b["name"] for p in plan.run)]
    rank = {b["name"]: i for i, b in enumerate(_asv_order(selected))}
    plan.run.sort(key=lambda p: (rank[p.benchmark], p.index))
    if not plan.run and not plan.not_run:
        if bench and everything:
            raise UsageError(f"--bench {bench!r} matches no point of the default selection; it matches "
                             f"{len(everything)} of the full suite (e.g. {everything[0].name}): use --full "
                             f"(make bench-full BENCH=...)")
        raise UsageError(f"--bench {bench!r} matches no benchmark; suites: "
                         f"{', '.join(sorted({b['name'].split('.')[0] for b in benchmarks}))}")
    return plan


def _asv_order(benchmarks: list[dict]) -> list[dict]:
    """The order asv runs the selected benchmarks in: grouped by setup_cache (groups in order of first
    appearance by name), by name within a group; so the plan's points come in the order they start."""
    groups: dict = {}
    for b in sorted(benchmarks, key=lambda b: b["name"]):
        groups.setdefault(b.get("setup_cache_key"), []).append(b)
    return [b for group in groups.values() for b in group]


def describe_not_run(plan: Plan) -> list[str]:
    """One line per benchmark class left out (with its point count) and per reason."""
    counts: dict[tuple[str, str], int] = {}
    for point, reason in plan.not_run.items():
        key = (point.benchmark.rsplit(".", 1)[0], reason)
        counts[key] = counts.get(key, 0) + 1
    return [f"{cls} ({n} points): {reason}" for (cls, reason), n in counts.items()]


def _compile(bench: str | None):
    if not bench:
        return None
    try:
        return re.compile(bench)
    except re.error as exc:
        raise UsageError(f"--bench {bench!r} is not a valid regular expression: {exc}") from None


def discover(benchmark_dir: str, python: str = sys.executable) -> list[dict]:
    """asv's own discovery of `benchmark_dir` (names, params, attributes), run as asv runs it."""
    import asv

    script = os.path.join(os.path.dirname(os.path.abspath(asv.__file__)), "benchmark.py")
    with tempfile.TemporaryDirectory(prefix="rlperf-discover-") as tmp:
        out = os.path.join(tmp, "benchmarks.json")
        proc = subprocess.run([python, script, "discover", os.path.abspath(benchmark_dir), out],
                              capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0 or not os.path.isfile(out):
            raise UsageError(f"the benchmark suite in {benchmark_dir} does not import:\n{proc.stdout}{proc.stderr}")
        with open(out) as fh:
            return json.load(fh)


def cuda_visible() -> bool:
    """Whether a GPU is visible (NVML, no torch import: the decision costs milliseconds)."""
    from rlperf.measure.guards import visible_gpu_free_bytes

    return bool(visible_gpu_free_bytes())


__all__ = ["DEFAULT_POINTS", "GPU_HISTORY_POINTS", "HISTORY_POINTS", "NEEDS_CUDA", "NULL_RUN_POINTS", "NO_CUDA_REASON", "SELECTIONS", "Plan", "Point",
           "cuda_visible", "describe_not_run", "discover", "make_plan", "points_of"]
