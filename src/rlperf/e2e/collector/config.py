"""The task settings the collector needs beyond the replay Workload: action scale, episode length, env block."""

from __future__ import annotations

from dataclasses import dataclass, field

from rlperf.errors import UsageError
from rlperf.workload import Workload, _compose_cfg

CTRL_DT = 0.02  # docs/workloads.md C0
TASKS = ("g1_walk_flat", "g1_motion_tracking")


@dataclass(frozen=True)
class TaskConfig:
    task: str
    sim: str
    action_scale: float
    episode_steps: int
    noise: dict = field(default_factory=dict)  # noise_config: level and scale_* (B2, B3)
    reward_scales: dict = field(default_factory=dict)  # YAML order
    env: dict = field(default_factory=dict)  # the whole env block, plain data
    ctrl_dt: float = CTRL_DT


def task_config(workload: Workload, overrides: tuple[str, ...] | list[str] = ()) -> TaskConfig:
    """Compose the workload's task config again (with the same overrides) and keep the collector's keys."""
    from omegaconf import OmegaConf

    if workload.task not in TASKS:
        raise UsageError(f"the collector runs tasks {', '.join(TASKS)}; got {workload.task!r}")
    cfg = _compose_cfg(workload.task, workload.sim, list(overrides))
    env = OmegaConf.to_container(cfg.env, resolve=True)
    return TaskConfig(task=workload.task, sim=workload.sim,
                      action_scale=float(env["control_config"]["action_scale"]),
                      episode_steps=int(cfg.task.episode_steps), noise=dict(workload.noise),
                      reward_scales=dict(workload.reward_scales), env=env)
