"""asv e2e suite: the single-GPU SAC iteration per placement and prefetch mode, and the collector step.

`E2EIteration` measures a point when one of its tracks first runs, in that track's process (its own
collector and learner, at the task's default env count: 2,048 for both tasks), and stores the samples in
the run's folder from `setup_cache` for the point's other two tracks (benchmarks/_lazy.py): a `--bench`
selection measures only the points it selects. Physics is `recorded`, where the exposed replay time is
judged. Tracks return raw per-iteration samples; the iteration and exposed replay times are costs, env
steps/s is declared `@higher_is_better` for the gate.
GPU points skip on CPU boxes with the reason, decided before torch is imported; infeasible points skip
with the memory guard's reason (bytes needed and available).

`E2ECollectorStep` is the small CPU point CI runs: the real collector's step with each update_state
kernel. It needs `rlperf.e2e.collector` (MuJoCo) and skips with that reason when it is missing.
"""

from __future__ import annotations

from rlperf.gate.meta import higher_is_better

from . import _lazy

TASKS = ("g1_motion_tracking", "g1_walk_flat")
SIM, PHYSICS = "mujoco", "recorded"
PREFETCH = ("none", "one_tick")
ITERATIONS, WARMUP = 10, 2
COLLECTOR_ENVS, COLLECTOR_STEPS = 256, 8


def _placements() -> list[str]:
    """The single-GPU placements, a new one appended (benchmarks._suite: asv keys history by value)."""
    from ._suite import append_only
    from rlperf.e2e.loop.batches import single_gpu_placements

    return append_only(single_gpu_placements())


def _skip_all_reason() -> str | None:
    from rlperf.e2e.loop.collectors import collector_missing_reason
    from rlperf.measure.guards import nvidia_smi_free_bytes

    if not nvidia_smi_free_bytes():
        return "e2e iteration needs a CUDA device for the learner; none visible (nvidia-smi)"
    return collector_missing_reason()


def measure_point(task: str, placement: str, prefetch: str, iterations: int = ITERATIONS, warmup: int = WARMUP,
                  overrides=(), threads: int | None = None) -> dict:
    """One point's per-iteration samples ({"iteration_ms", "exposed_replay_wait_ms", "env_steps_per_s"}),
    or {"skip": reason}: its own collector and learner, at the task's default env count."""
    from rlperf.e2e.loop.session import E2EPlan, run_plan
    from rlperf.workload import compose

    plan = E2EPlan(task=task, sim=SIM, placements=(placement,), prefetch=(prefetch,), schedules=("synchronous",),
                   num_envs=(compose(task, SIM, list(overrides)).num_envs,), iterations=iterations, warmup=warmup,
                   physics=PHYSICS, ab_steps=0, overrides=tuple(overrides), **({"threads": threads} if threads else {}))
    result = run_plan(plan)
    if result["skipped"]:
        return {"skip": result["skipped"][0]["reason"]}
    [p] = result["points"]
    rows = p["samples"]["replay"]
    rate = p["num_envs"] * p["env_steps_per_sync"] * 1e3
    return {"iteration_ms": [r["iteration_ms"] for r in rows],
            "exposed_replay_wait_ms": [r["batch_wait_ms"] for r in rows],
            "env_steps_per_s": [rate / r["iteration_ms"] for r in rows]}


class E2EIteration:
    """One synchronous iteration (collector step + `updates_per_step` SAC updates + weight sync)."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    param_names = ["task", "placement", "prefetch"]
    params = [list(TASKS), _placements(), list(PREFETCH)]
    timeout = 1800  # one point: its learner's build (and torch.compile on a cold cache), prefill and iterations
    number = 1
    repeat = 1
    rounds = 1

    def setup_cache(self):
        """The run's shared folder and the reason every point skips (None on a CUDA host with the collector)."""
        return {"folder": _lazy.fresh_folder("e2e-iteration"), "skip_all": _skip_all_reason()}

    def setup(self, cache, task, placement, prefetch):
        if cache["skip_all"]:
            raise NotImplementedError(cache["skip_all"])
        self.point = _lazy.measured_once(cache["folder"], (task, placement, prefetch),
                                         lambda: measure_point(task, placement, prefetch))
        if "skip" in self.point:
            raise NotImplementedError(self.point["skip"])

    def track_iteration_ms(self, cache, task, placement, prefetch):
        return {"samples": self.point["iteration_ms"], "number": 1}

    track_iteration_ms.unit = "ms"

    def track_exposed_replay_wait_ms(self, cache, task, placement, prefetch):
        """The learner's wait for its batch (CUDA events), physics recorded."""
        return {"samples": self.point["exposed_replay_wait_ms"], "number": 1}

    track_exposed_replay_wait_ms.unit = "ms"

    @higher_is_better
    def track_env_steps_per_s(self, cache, task, placement, prefetch):
        return {"samples": self.point["env_steps_per_s"], "number": 1}

    track_env_steps_per_s.unit = "env steps/s"


class E2ECollectorStep:
    """The real collector's step on the CPU (physics recorded), numpy against fused update_state."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    param_names = ["task", "kernel"]
    params = [list(TASKS), ["fused", "numpy"]]
    timeout = 600
    number = 1
    repeat = 1
    rounds = 1
    _cached: dict = {}

    def setup(self, task, kernel):
        from rlperf.e2e.loop import collectors

        missing = collectors.collector_missing_reason()
        if missing:
            raise NotImplementedError(missing)
        key = (task, kernel)
        if key not in self._cached:
            from rlperf.e2e.loop.session import E2EPlan, kernel_ab

            plan = E2EPlan(task=task, sim=SIM, placements=(), prefetch=(), schedules=(), num_envs=(COLLECTOR_ENVS,),
                           iterations=1, warmup=0, physics=PHYSICS, kernels=(kernel,), ab_steps=COLLECTOR_STEPS)
            [entry] = kernel_ab(plan, plan.workload(COLLECTOR_ENVS), collectors.load_collector_class())
            self._cached[key] = entry["phases_ms"]["total"]

    def track_step_ms(self, task, kernel):
        return {"samples": self._cached[(task, kernel)], "number": 1}

    track_step_ms.unit = "ms"


class E2ELearner:
    """The learner alone on a resident batch: eager against torch.compile against CUDA graphs."""

    version = "1"  # asv version: bump only when what this class measures changes (docs/gate.md, rule 4)
    param_names = ["task", "mode"]
    params = [list(TASKS), ["eager", "compile", "cuda-graphs"]]
    timeout = 1800  # torch.compile of both losses takes minutes on a cold cache
    number = 1
    repeat = 1
    rounds = 1
    _cached: dict = {}

    def setup(self, task, mode):
        from rlperf.measure.guards import nvidia_smi_free_bytes

        if not nvidia_smi_free_bytes():
            raise NotImplementedError("the learner benchmark needs a CUDA device; none visible (nvidia-smi)")
        from rlperf.e2e.learner.timing import learner_iteration_ms, learner_missing_reason

        missing = learner_missing_reason(task, SIM)
        if missing:
            raise NotImplementedError(missing)
        if (task, mode) not in self._cached:
            import torch

            self._cached[(task, mode)] = learner_iteration_ms(task, SIM, mode, device=torch.device("cuda", 0),
                                                              warmup=5, repeat=20)

    def track_iteration_ms(self, task, mode):
        return {"samples": self._cached[(task, mode)], "number": 1}

    track_iteration_ms.unit = "ms"
