"""Learner-only timing: one iteration's `updates_per_step` updates on a resident synthetic batch, eager,
compiled or CUDA-graphed (the reference point: ~46 ms eager on an H200 for motion tracking's
4 x 8,192 rows with 501 atoms). CUDA events on a GPU, a wall clock on the CPU."""

from __future__ import annotations

from rlperf.e2e.learner.config import learner_config
from rlperf.e2e.learner.sac import SacLearner
from rlperf.e2e.learner.synthetic import synthetic_batch
from rlperf.measure.timing import time_cuda, time_wall

LEARNER_MODES = {
    "eager": ("algo.use_compile=false", "algo.use_cuda_graphs=false"),
    "compile": ("algo.use_compile=true", "algo.use_cuda_graphs=false"),
    "cuda-graphs": ("algo.use_compile=true", "algo.use_cuda_graphs=true"),
}


def learner_missing_reason(task: str, sim: str) -> str | None:
    """Why `task`'s learner cannot be built here, else None. With use_symmetry it mirrors each batch by the
    G1 model's joint order (symmetry.g1_order), so it needs the e2e extra even on a synthetic batch."""
    if not learner_config(task, sim).use_symmetry:
        return None
    from rlperf.e2e.collector.assets import model_missing_reason  # noqa: PLC0415 - imports no MuJoCo

    missing = model_missing_reason()
    return f"the {task} learner mirrors its batches by the G1 model's joints: {missing}" if missing else None


def learner_iteration_ms(task: str, sim: str, mode: str, *, device, warmup: int, repeat: int,
                         overrides: tuple[str, ...] = ()) -> list[float]:
    """Samples in ms of `SacLearner.iteration` (compile and graph capture happen in the warmup)."""
    if mode not in LEARNER_MODES:
        from rlperf.errors import choice_error

        raise choice_error("learner mode", mode, LEARNER_MODES)
    cfg = learner_config(task, sim, [*overrides, *LEARNER_MODES[mode]])
    learner = SacLearner(cfg, device, seed=0)
    batch = synthetic_batch(cfg, cfg.learner_batch * cfg.updates_per_step, device=device)
    step = lambda: learner.iteration(batch)  # noqa: E731
    if learner.device.type == "cuda":
        return time_cuda(step, warmup=warmup, repeat=repeat)
    return time_wall(step, warmup=warmup, repeat=repeat)
