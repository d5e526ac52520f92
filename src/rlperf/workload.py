"""compose(task, sim, overrides) -> Workload: replay shapes, bytes and traffic from the Hydra config.

All arithmetic follows docs/workloads.md A3/A4: capacity = num_envs * replay_buffer_n; learner batch =
batch_size // symmetry multiplier; S = learner batch * updates_per_step rows per rank per iteration.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from importlib import resources

from rlperf.errors import UsageError, choice_error
from rlperf.row_layout import RowLayout

ALGO = "sac"


def available_tasks() -> dict[str, tuple[str, ...]]:
    """task -> sims, read from the packaged config tree (conf/task/sac/<task>/<sim>.yaml)."""
    root = resources.files("rlperf.conf") / "task" / ALGO
    return {
        task.name: tuple(sorted(f.name[:-5] for f in task.iterdir() if f.name.endswith(".yaml")))
        for task in sorted(root.iterdir(), key=lambda p: p.name)
        if task.is_dir()
    }


@dataclass(frozen=True)
class Workload:
    """A frozen replay workload; every derived quantity is a property, so none can drift."""

    task: str
    sim: str
    num_envs: int
    batch_size: int
    use_symmetry: bool
    symmetry_batch_multiplier: int
    updates_per_step: int
    replay_buffer_n: int
    learning_starts: int
    env_steps_per_sync: int
    policy_frequency: int
    obs_dim: int
    action_dim: int
    critic_dim: int
    actor_hidden_dim: int
    critic_hidden_dim: int
    num_atoms: int
    gpus: int = 1
    reward_scales: tuple[tuple[str, float], ...] = field(default=(), repr=False)
    noise: tuple[tuple[str, float], ...] = field(default=(), repr=False)

    # ---- row ---------------------------------------------------------------------------------
    @cached_property
    def layout(self) -> RowLayout:
        return RowLayout(self.obs_dim, self.action_dim, self.critic_dim)

    @property
    def row_floats(self) -> int:
        return self.layout.width

    @property
    def row_bytes(self) -> int:
        return self.layout.row_bytes

    # ---- capacity and ingest -----------------------------------------------------------------
    @property
    def capacity_rows(self) -> int:
        return self.num_envs * self.replay_buffer_n

    @property
    def replay_bytes(self) -> int:
        return self.capacity_rows * self.row_bytes

    @property
    def add_rows(self) -> int:
        """Rows written by one `add` (one vector env step)."""
        return self.num_envs

    @property
    def add_bytes(self) -> int:
        return self.add_rows * self.row_bytes

    @property
    def collector_rows_per_iteration(self) -> int:
        return self.num_envs * self.env_steps_per_sync

    # ---- learning start ----------------------------------------------------------------------
    @property
    def learner_batch(self) -> int:
        return self.batch_size // (self.symmetry_batch_multiplier if self.use_symmetry else 1)

    @property
    def learning_start_rows(self) -> int:
        return max(self.learner_batch, max(self.learning_starts, 0) * self.num_envs)

    @property
    def learning_start_bytes(self) -> int:
        return self.learning_start_rows * self.row_bytes

    @property
    def learning_start_chunks(self) -> int:
        """Collector syncs needed before the first learner iteration."""
        return math.ceil(self.learning_start_rows / self.collector_rows_per_iteration)

    # ---- sampling ----------------------------------------------------------------------------
    @property
    def sample_rows_per_rank(self) -> int:
        return self.learner_batch * self.updates_per_step

    @property
    def sample_bytes_per_rank(self) -> int:
        return self.sample_rows_per_rank * self.row_bytes

    @property
    def global_sample_bytes(self) -> int:
        return self.sample_bytes_per_rank * self.gpus

    @property
    def sample_new_ratio_per_rank(self) -> float:
        return self.sample_rows_per_rank / self.collector_rows_per_iteration

    @property
    def global_sample_new_ratio(self) -> float:
        return self.sample_new_ratio_per_rank * self.gpus

    def with_gpus(self, gpus: int) -> "Workload":
        return replace(self, gpus=gpus)

    def with_envs(self, num_envs: int) -> "Workload":
        """The same workload at `num_envs` envs (capacity, ingest and learning start follow), without a
        second Hydra compose: `compose(..., ["algo.num_envs=N"])` gives the same values."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs <= 0:
            raise UsageError(f"num_envs must be a positive integer, got {num_envs!r}")
        return replace(self, num_envs=num_envs)

    def summary(self) -> dict:
        """The configured values plus every derived quantity, JSON-ready."""
        base = asdict(self)
        base["reward_scales"] = dict(self.reward_scales)
        base["noise"] = dict(self.noise)
        derived = {name: getattr(self, name) for name in DERIVED}
        derived["field_offsets"] = {k: list(v) for k, v in self.layout.offsets().items()}
        return {**base, **derived}


DERIVED = (
    "row_floats", "row_bytes", "capacity_rows", "replay_bytes", "add_rows", "add_bytes",
    "learner_batch", "learning_start_rows", "learning_start_bytes", "learning_start_chunks",
    "sample_rows_per_rank", "sample_bytes_per_rank", "global_sample_bytes",
    "collector_rows_per_iteration", "sample_new_ratio_per_rank", "global_sample_new_ratio",
)


def compose(task: str, sim: str, overrides: list[str] | tuple[str, ...] = (), *, gpus: int = 1) -> Workload:
    """Compose `algo=sac task=sac/<task>/<sim>` plus Hydra overrides into a frozen Workload."""
    tasks = available_tasks()
    if task not in tasks:
        raise choice_error("task", task, tasks)
    if sim not in tasks[task]:
        raise choice_error("sim", sim, tasks[task], context=f"for task {task!r}")
    if not isinstance(gpus, int) or gpus <= 0:
        raise UsageError(f"--gpus must be a positive integer, got {gpus!r}")
    _check_override_syntax(list(overrides))
    cfg = _compose_cfg(task, sim, list(overrides))
    algo, shape = cfg.algo, cfg.task
    from omegaconf.errors import OmegaConfBaseException

    try:
        return _validate(Workload(
            task=task, sim=sim,
            num_envs=_int(cfg, "algo.num_envs"), batch_size=_int(cfg, "algo.batch_size"),
            use_symmetry=bool(algo.use_symmetry),
            symmetry_batch_multiplier=_int(cfg, "task.symmetry_batch_multiplier"),
            updates_per_step=_int(cfg, "algo.updates_per_step"), replay_buffer_n=_int(cfg, "algo.replay_buffer_n"),
            learning_starts=_int(cfg, "algo.learning_starts"),
            env_steps_per_sync=_int(cfg, "training.env_steps_per_sync"),
            policy_frequency=_int(cfg, "algo.policy_frequency"),
            obs_dim=_int(cfg, "task.obs_dim"), action_dim=_int(cfg, "task.action_dim"),
            critic_dim=_int(cfg, "task.critic_dim"),
            actor_hidden_dim=_int(cfg, "algo.actor_hidden_dim"), critic_hidden_dim=_int(cfg, "algo.critic_hidden_dim"),
            num_atoms=_int(cfg, "algo.num_atoms"), gpus=gpus,
            reward_scales=tuple((k, float(v)) for k, v in cfg.reward.scales.items()),
            noise=tuple((k, float(v)) for k, v in cfg.env.noise_config.items()),
        ))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"invalid value after overrides {list(overrides)}: {exc}") from None
    except (AttributeError, KeyError, OmegaConfBaseException) as exc:  # e.g. ~algo.num_envs removed a key
        raise UsageError(f"overrides {list(overrides)} left the config without a key the workload needs "
                         f"({exc}); set it instead, e.g. algo.num_envs=4096") from None


OVERRIDE_EXAMPLE = "e.g. algo.num_envs=4096 or algo.use_symmetry=false"


def _int(cfg, key: str) -> int:
    """An integer setting; a float (1.5) or a bool (true) is refused, never truncated to 1."""
    from omegaconf import OmegaConf

    value = OmegaConf.select(cfg, key, throw_on_missing=True)
    if value is None:
        raise KeyError(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer, got {value!r} ({type(value).__name__}), "
                         f"{OVERRIDE_EXAMPLE}")
    return value


def _check_override_syntax(overrides: list[str]) -> None:
    """Parse the overrides with Hydra's own grammar before composing: bad syntax or a missing key is
    exit 2 with Hydra's message and an example, never a traceback from inside the composition."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise UsageError(f"bad Hydra override syntax in {overrides}: {exc}\n({OVERRIDE_EXAMPLE})") from None
    for override in parsed:
        if not override.key_or_group:
            raise UsageError(f"Hydra override {override.input_line!r} names no key; write KEY=VALUE, "
                             f"{OVERRIDE_EXAMPLE}")


def _validate(wl: Workload) -> Workload:
    """Reject overrides that make the arithmetic meaningless (zero or negative sizes)."""
    for name in ("num_envs", "batch_size", "updates_per_step", "replay_buffer_n", "env_steps_per_sync",
                 "obs_dim", "action_dim"):
        if getattr(wl, name) <= 0:
            raise ValueError(f"{name} must be positive, got {getattr(wl, name)}")
    if wl.learner_batch <= 0:
        raise ValueError(f"learner batch {wl.learner_batch} must be positive")
    return wl


def _compose_cfg(task: str, sim: str, overrides: list[str]):
    from hydra import compose as hydra_compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module="rlperf.conf", version_base=None):
            return hydra_compose("config", overrides=[f"algo={ALGO}", f"task={ALGO}/{task}/{sim}", *overrides])
    except (HydraException, OmegaConfBaseException, ValueError) as exc:  # ValueError: e.g. group=5
        raise UsageError(f"bad Hydra override in {overrides}: {exc} ({OVERRIDE_EXAMPLE})") from None
    finally:
        GlobalHydra.instance().clear()
