"""asv replay suite: one class per reference quantity, parameter points from rlperf.replay.cases.

Placements are the registry's named storage x sampler x transfer combinations (rlperf.replay.placements);
`ReplayPeakMemory` tracks peak host and device bytes per placement and capacity.

Each `track_ms` returns CUDA-event or synchronised wall-clock samples as `{"samples": [...]}`, so asv
computes the statistics (all values are costs in ms: lower is better). Infeasible points raise
NotImplementedError in setup with the guard's reason (bytes needed and available) and show as n/a;
that decision is made without importing torch where it can be, since asv spawns a process per point.
"""

from ._replay_api import build, is_multi_rank, torch_threads
from ._suite import append_only, skip_point
from rlperf.replay.cases import (ALL_SPECS, CAPACITY_EXPONENTS, DEFAULT_SIM, DEFAULT_TASK, GPU_COUNTS,
                                 ReplayCase, Resources, feasibility)
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D

WARMUP, REPEAT = 5, 20


def _skip_unless(verdict):
    if not verdict.ok:
        raise NotImplementedError(verdict.reason)


NO_CUDA = "no CUDA device: device timing not measured"


def _feasible_case(capacity_exp, placement, gpus, *, device_timing):
    """The point's case, or NotImplementedError with the guard's reason: asked first without importing
    torch (nvidia-smi; asv spawns a process per point), then with torch, the truth for points that run.
    `device_timing`: the point times on the GPU, so no CUDA device is a skip too."""
    case = ReplayCase(DEFAULT_TASK, DEFAULT_SIM, placement, 2**capacity_exp, gpus)
    cheap = Resources.probe_cheap()
    _skip_unless(feasibility(case, cheap))
    if device_timing and not cheap.cuda_devices:
        raise NotImplementedError(NO_CUDA)
    _skip_unless(feasibility(case, Resources.probe()))
    from rlperf.replay.run import learner_device

    if device_timing and learner_device() is None:
        raise NotImplementedError(NO_CUDA)
    return case


def _set_up(case, gpus):
    """The case's single-process placement, built by the commit's own builder, set up and verified."""
    placement_obj = build(case, threads=torch_threads(gpus), seed=12345)
    placement_obj.setup()
    placement_obj.verify()
    return placement_obj


def _placements_reporting(metric):
    """Placements that report `metric`, a new one appended (benchmarks._suite: asv keys history by value)."""
    return append_only(name for name, spec in ALL_SPECS.items() if metric in spec.metrics)


class _ReplayMetric:
    """Base: set up one placement per (capacity, placement, GPUs) once per process, then time `metric`."""

    metric = None
    param_names = ["capacity_exp", "placement", "gpus"]
    unit = "ms"
    timeout = 1800  # filling a 2^24-row host table and pinning staging takes minutes on big hosts
    number = 1
    repeat = 1
    rounds = 1

    def setup(self, capacity_exp, placement, gpus):
        key = (capacity_exp, placement, gpus)
        if getattr(self, "_key", None) == key:
            return
        case = _feasible_case(capacity_exp, placement, gpus, device_timing=self.metric != CPU_SAMPLE)
        if is_multi_rank(placement, case.spec):
            self._measure = self._multirank(case)
        else:
            placement_obj = _set_up(case, gpus)
            self._measure = lambda: placement_obj.measure(self.metric, warmup=WARMUP, repeat=REPEAT)
        self._key = key

    def _multirank(self, case):
        """Ranks are processes: run the whole case once in setup, hand out this metric's samples."""
        from rlperf.replay.multirank import run_multirank_case

        outcome = run_multirank_case(case, Resources.probe(), warmup=WARMUP, repeat=REPEAT, seed=12345)
        timing = (outcome.result or {}).get("timings", {}).get(self.metric)
        if timing is None:
            reasons = "; ".join(s["reason"] for s in outcome.skipped) or f"{case.placement} did not report it"
            raise NotImplementedError(reasons)
        return lambda: timing["samples_ms"]

    def track_ms(self, capacity_exp, placement, gpus):
        return {"samples": self._measure(), "number": 1}


class ReplayPeakMemory:
    """Peak host RSS and peak device memory of one single-process placement (set up, verified, sampled),
    in bytes: asv runs one point per process, so the process's high-water mark is the point's."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    param_names = ["capacity_exp", "placement"]
    # the reference capacity and the compact layout's 2^26 goal: filling more tables only to read RSS costs minutes
    params = [[20, 26], append_only(name for name, spec in ALL_SPECS.items() if not is_multi_rank(name, spec))]
    unit = "bytes"
    timeout = 1800
    number = 1
    repeat = 1
    rounds = 1

    def setup(self, capacity_exp, placement):
        key = (capacity_exp, placement)
        if getattr(self, "_key", None) == key:
            return
        case = _feasible_case(capacity_exp, placement, 1, device_timing=False)
        from rlperf.replay.peak_memory import PeakMemory
        from rlperf.replay.run import learner_device

        self._on_device = learner_device() is not None  # without one there is no device peak (not 0 bytes)
        peak = PeakMemory(learner_device())
        _set_up(case, 1).sample()
        self._peak = peak.read()
        self._key = key

    def track_host_peak_bytes(self, capacity_exp, placement):
        return self._peak["host_peak_rss_bytes"]

    def track_device_peak_bytes(self, capacity_exp, placement):
        if not self._on_device:
            skip_point("no CUDA device: device peak not measured")
        return self._peak["device_peak_bytes"]


class ReplayCpuSample(_ReplayMetric):
    """Host random gather of one learner batch into staging (torch threads = cores // GPUs)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    metric = CPU_SAMPLE
    params = [list(CAPACITY_EXPONENTS), _placements_reporting(CPU_SAMPLE), list(GPU_COUNTS)]


class ReplayH2D(_ReplayMetric):
    """H2D copy of one gathered batch on a copy stream (CUDA events)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    metric = H2D
    params = [list(CAPACITY_EXPONENTS), _placements_reporting(H2D), list(GPU_COUNTS)]


class ReplayEndToEnd(_ReplayMetric):
    """Host replay to a batch on the learner GPU, its own synchronised pass."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    metric = END_TO_END
    params = [list(CAPACITY_EXPONENTS), _placements_reporting(END_TO_END), list(GPU_COUNTS)]


class ReplayGpuSample(_ReplayMetric):
    """GPU-resident device randint + gather (CUDA events)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    metric = GPU_SAMPLE
    params = [list(CAPACITY_EXPONENTS), _placements_reporting(GPU_SAMPLE), list(GPU_COUNTS)]
