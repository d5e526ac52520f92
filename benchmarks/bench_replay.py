"""asv replay suite: one class per reference quantity, parameter points from rlperf.replay.cases.

Placements are the registry's named storage x sampler x transfer combinations (rlperf.replay.placements);
`ReplayPeakMemory` tracks peak host and device bytes per placement and capacity.

Each `track_ms` returns CUDA-event or synchronised wall-clock samples as `{"samples": [...]}`, so asv
computes the statistics (all values are costs in ms: lower is better). Infeasible points raise
NotImplementedError in setup with the guard's reason (bytes needed and available) and show as n/a;
that decision is made without importing torch where it can be, since asv spawns a process per point.
"""

from ._suite import append_only
from ._suite import skip_point
from rlperf.replay.cases import (ALL_SPECS, CAPACITY_EXPONENTS, DEFAULT_SIM, DEFAULT_TASK, GPU_COUNTS,
                                 ReplayCase, Resources, default_torch_threads, feasibility)
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D

WARMUP, REPEAT = 5, 20
SEED = 12345


def _skip_unless(verdict):
    if not verdict.ok:
        raise NotImplementedError(verdict.reason)


def _multi_rank(name, spec) -> bool:
    """Whether a placement runs as rank processes: the spec's flag since d428174 (one registry), before it
    membership of rlperf.replay.multirank.RANK_SPECS (the history runs this suite over older `src`)."""
    if hasattr(spec, "multi_rank"):
        return spec.multi_rank
    from rlperf.replay.multirank import RANK_SPECS

    return name in RANK_SPECS


def _build(case, threads):
    """The case's placement, not set up: rlperf.replay.build since d428174, rlperf.replay.run's before it."""
    import importlib.util

    from rlperf.replay.run import learner_device

    if importlib.util.find_spec("rlperf.replay.build") is None:
        from rlperf.replay.run import build_placement as build_case

        return build_case(case, threads=threads, seed=SEED)
    from rlperf.replay.build import build_placement

    return build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=threads,
                           seed=SEED)


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
        case = ReplayCase(DEFAULT_TASK, DEFAULT_SIM, placement, 2**capacity_exp, gpus)
        cheap = Resources.probe_cheap()  # nvidia-smi: skip without importing torch when we can
        _skip_unless(feasibility(case, cheap))
        if self.metric != CPU_SAMPLE and not cheap.cuda_devices:
            raise NotImplementedError("no CUDA device: device timing not measured")
        _skip_unless(feasibility(case, Resources.probe()))  # torch: the truth for points that will run
        from rlperf.replay.run import learner_device

        if self.metric != CPU_SAMPLE and learner_device() is None:
            raise NotImplementedError("no CUDA device: device timing not measured")
        if _multi_rank(placement, case.spec):
            self._measure = self._multirank(case)
        else:
            placement_obj = _build(case, default_torch_threads(gpus))
            placement_obj.setup()
            placement_obj.verify()
            self._measure = lambda: placement_obj.measure(self.metric, warmup=WARMUP, repeat=REPEAT)
        self._key = key

    def _multirank(self, case):
        """Ranks are processes: run the whole case once in setup, hand out this metric's samples."""
        from rlperf.replay.multirank import run_multirank_case

        outcome = run_multirank_case(case, Resources.probe(), warmup=WARMUP, repeat=REPEAT, seed=SEED)
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
    params = [[20, 26], append_only(name for name, spec in ALL_SPECS.items() if not _multi_rank(name, spec))]
    unit = "bytes"
    timeout = 1800
    number = 1
    repeat = 1
    rounds = 1

    def setup(self, capacity_exp, placement):
        key = (capacity_exp, placement)
        if getattr(self, "_key", None) == key:
            return
        case = ReplayCase(DEFAULT_TASK, DEFAULT_SIM, placement, 2**capacity_exp, 1)
        for probe in (Resources.probe_cheap, Resources.probe):
            verdict = feasibility(case, probe())
            if not verdict.ok:
                raise NotImplementedError(verdict.reason)
        from rlperf.replay.peak_memory import PeakMemory
        from rlperf.replay.run import learner_device

        self._on_device = learner_device() is not None  # without one there is no device peak (not 0 bytes)
        peak = PeakMemory(learner_device())
        placement_obj = _build(case, default_torch_threads(1))
        placement_obj.setup()
        placement_obj.verify()
        placement_obj.sample()
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
