"""A whole e2e run: for every env count, one learner and one collector serve every placement,
schedule and prefetch mode in turn; then the collector's kernel A/B. Shared by the CLI and asv."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

from rlperf.e2e import progress as say
from rlperf.e2e.learner import symmetry
from rlperf.e2e.learner.config import LearnerConfig, learner_config
from rlperf.e2e.loop.batches import ReplayPort, SwitchableWriter, replay_memory_verdict
from rlperf.e2e.loop import collectors
from rlperf.e2e.loop.matrix import measure_point, profile_iteration
from rlperf.e2e.loop.outline import learner_mode, placement_split
from rlperf.workload import Workload, compose

AB_WARMUP_STEPS = 2  # the reference collector A/B: warmup 2, measure 8 (docs/workloads.md C8)


@dataclass(frozen=True)
class E2EPlan:
    task: str
    sim: str
    placements: tuple[str, ...]
    prefetch: tuple[str, ...]
    schedules: tuple[str, ...]
    num_envs: tuple[int, ...]
    iterations: int
    warmup: int
    physics: str
    kernels: tuple[str, ...] = ("fused", "numpy")
    ab_steps: int = 8
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    seed: int = 0
    overrides: tuple[str, ...] = ()
    profile: str | None = None

    def workload(self, num_envs: int) -> Workload:
        return _workload(self.task, self.sim, self.overrides).with_envs(num_envs)

    def learner(self, num_envs: int) -> LearnerConfig:
        return _learner(self.task, self.sim, self.overrides, num_envs)


@functools.lru_cache(maxsize=32)
def _workload(task: str, sim: str, overrides: tuple[str, ...]) -> Workload:
    return compose(task, sim, list(overrides))  # a Hydra compose costs ~0.5 s: once per plan


@functools.lru_cache(maxsize=32)
def _learner(task: str, sim: str, overrides: tuple[str, ...], num_envs: int) -> LearnerConfig:
    return learner_config(task, sim, list(overrides), workload=_workload(task, sim, overrides).with_envs(num_envs))


def learner_device():
    import torch

    return torch.device("cuda", 0) if torch.cuda.is_available() else None


def _resources(device) -> tuple[int, int]:
    from rlperf.measure import guards

    return guards.available_host_bytes(), guards.free_device_bytes(device) if device is not None else 0


def run_plan(plan: E2EPlan) -> dict:
    """Every point of the plan (skips with reasons), the collector A/B, the learner facts;
    torch's intra-op pool is `plan.threads` for the run and restored after it. Each step is announced
    on the `rlperf.e2e` logger (`rlperf.e2e.progress`) before it starts."""
    import torch

    threads_before = torch.get_num_threads()
    torch.set_num_threads(plan.threads)
    try:
        return _run_plan(plan)
    finally:
        torch.set_num_threads(threads_before)


def _run_plan(plan: E2EPlan) -> dict:
    import torch

    from rlperf.e2e.learner.sac import SacLearner

    device = learner_device()
    collector_cls = collectors.load_collector_class()
    points, skipped, ab, learners = [], [], [], {}
    runnable, _ = placement_split(plan.placements, cuda=device is not None)
    total = len(plan.num_envs) * len(runnable) * len(plan.schedules) * len(plan.prefetch)
    for num_envs in plan.num_envs:
        workload, cfg = plan.workload(num_envs), plan.learner(num_envs)
        with say.stage(f"{num_envs:,} envs: building the SAC learner on {device or 'the CPU'} ({learner_mode(cfg)})"):
            learner = SacLearner(cfg, device if device is not None else "cpu", seed=plan.seed)
        compiles = cfg.use_compile  # torch.compile (and graph capture) run in this learner's first iterations
        learners[str(num_envs)] = {**cfg.summary(), "parameters": learner.parameter_count(),
                                   "device": str(learner.device), "symmetry": symmetry.note(cfg.use_symmetry,
                                                                                   cfg.learner_batch)}
        writer = SwitchableWriter()
        with say.stage(f"{num_envs:,} envs: building the collector ({plan.physics} physics, fused update_state)"):
            collector = collector_cls(workload, physics=plan.physics, kernel="fused",
                                      threads=plan.threads, seed=plan.seed, replay_writer=writer,
                                      policy=learner.cpu_actor())
        for placement in plan.placements:
            base = {"num_envs": num_envs, "placement": placement}
            host_free, device_free = _resources(device)
            verdict = replay_memory_verdict(placement, workload, workload.capacity_rows, cuda=device is not None,
                                            host_available=host_free, device_free=device_free)
            if not verdict.ok:
                skipped.append({**base, "reason": verdict.reason})
                say.note(f"{num_envs:,} envs, {placement}: skipped: {verdict.reason}")
                continue
            port = ReplayPort(placement, workload, capacity_rows=workload.capacity_rows, device=device,
                              threads=plan.threads, seed=plan.seed)
            try:
                with say.stage(f"{placement}: allocating {workload.capacity_rows:,} replay rows and prefilling them"):
                    port.setup()
                    writer.target = port.storage
                    prefill = collector.prefill(writer, workload.capacity_rows)
                for schedule in plan.schedules:
                    for prefetch in plan.prefetch:
                        label = (f"point {len(points) + 1}/{total} ({num_envs:,} envs, {placement}, {schedule}, "
                                 f"prefetch {prefetch})")
                        if compiles:
                            say.note(f"the first iteration of {label} compiles the learner's losses "
                                     f"({learner_mode(cfg)}): minutes on a 2-core CPU; algo.use_compile=false "
                                     f"runs them eager")
                            compiles = False
                        ticker = say.Ticker(label, 2 * (plan.warmup + plan.iterations))
                        with say.stage(f"{label}: {ticker.total} iterations"):
                            point = measure_point(port, collector, learner, schedule=schedule, prefetch=prefetch,
                                                  iterations=plan.iterations, warmup=plan.warmup, device=device,
                                                  env_steps_per_sync=workload.env_steps_per_sync,
                                                  progress=ticker)
                        points.append({**base, "physics": plan.physics, "capacity_rows": workload.capacity_rows,
                                       "layout": port.spec.layout_name,
                                       "stored_row_bytes": port.layout.stored_row_bytes,
                                       "batch_row_bytes": port.layout.batch_row_bytes,
                                       "sample_rows": workload.sample_rows_per_rank,
                                       "env_steps_per_sync": workload.env_steps_per_sync,
                                       "updates_per_step": workload.updates_per_step,
                                       "bytes_per_sample": port.bytes_per_sample(), "prefill": prefill, **point})
                        if plan.profile and not any(p.get("profile") for p in points):
                            say.note(f"{label}: one more iteration under torch.profiler -> {plan.profile}")
                            points[-1]["profile"] = profile_iteration(
                                port, collector, learner, schedule=schedule, prefetch=prefetch, device=device,
                                env_steps_per_sync=workload.env_steps_per_sync, path=plan.profile)
            except torch.cuda.OutOfMemoryError as exc:
                skipped.append({**base, "reason": f"device OOM during allocation or run: {exc}"})
            except RuntimeError as exc:  # an elided layout's terminal table overflowed: this point cannot run
                if "terminal table full" not in str(exc):
                    raise
                skipped.append({**base, "reason": str(exc)})
            finally:
                writer.target = None
                port.close()
        del collector
        ab += kernel_ab(plan, workload, collector_cls)
    return {"points": points, "skipped": skipped, "collector_ab": ab, "learner": learners,
            "device": str(device) if device is not None else "cpu"}


def kernel_ab(plan: E2EPlan, workload: Workload, collector_cls) -> list[dict]:
    """The same collector with each update_state kernel, stepping alone into a small CPU replay."""
    from rlperf.replay.storage import ReplayStorage

    if plan.ab_steps <= 0:
        return []
    out = []
    for kernel in plan.kernels:
        storage = ReplayStorage(workload.layout, workload.num_envs * (AB_WARMUP_STEPS + plan.ab_steps + 1))
        what = f"collector A/B, {workload.num_envs:,} envs, {kernel} update_state"
        with say.stage(f"{what}: building the collector"):
            collector = collector_cls(workload, physics=plan.physics, kernel=kernel,
                                      threads=plan.threads, seed=plan.seed, replay_writer=storage)
        with say.stage(f"{what}: {AB_WARMUP_STEPS} warmup + {plan.ab_steps} timed steps"):
            phases = collectors.collector_step_breakdown(collector, steps=plan.ab_steps, warmup=AB_WARMUP_STEPS)
        out.append({"num_envs": workload.num_envs, "kernel": kernel, "physics": plan.physics,
                    "warmup_steps": AB_WARMUP_STEPS, "steps": plan.ab_steps, "phases_ms": phases})
        del collector, storage
    return out
