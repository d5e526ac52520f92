"""LearnerConfig: every SAC learner value, read from the same Hydra composition as the Workload.

The Workload holds replay shapes only; the learner also needs the optimisation values (gamma, tau,
learning rates, alpha, C51 support, precision and compile flags), so they are read here from the one
config tree, with the same overrides, instead of being repeated in code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rlperf.errors import UsageError
from rlperf.workload import Workload, _compose_cfg, compose

AMP_DTYPES = ("auto", "bfloat16")


@dataclass(frozen=True)
class LearnerConfig:
    obs_dim: int
    critic_dim: int
    action_dim: int
    learner_batch: int
    updates_per_step: int
    policy_frequency: int
    use_symmetry: bool
    gamma: float
    tau: float
    actor_lr: float
    critic_lr: float
    alpha_lr: float
    alpha_init: float
    target_entropy_ratio: float
    max_grad_norm: float
    actor_hidden_dim: int
    critic_hidden_dim: int
    num_atoms: int
    v_min: float
    v_max: float
    use_layer_norm: bool
    use_amp: bool
    amp_dtype: str
    use_compile: bool
    use_cuda_graphs: bool

    def __post_init__(self):
        for name in ("obs_dim", "critic_dim", "action_dim", "learner_batch", "updates_per_step",
                     "policy_frequency", "actor_hidden_dim", "critic_hidden_dim"):
            if getattr(self, name) <= 0:
                raise UsageError(f"learner config: {name} must be positive, got {getattr(self, name)}")
        if self.num_atoms < 2:
            raise UsageError(f"learner config: num_atoms must be >= 2, got {self.num_atoms}")
        if not self.v_min < self.v_max:
            raise UsageError(f"learner config: v_min {self.v_min} must be below v_max {self.v_max}")
        if self.amp_dtype not in AMP_DTYPES:
            raise UsageError(f"learner config: amp_dtype {self.amp_dtype!r} is not supported; valid: "
                             f"{', '.join(AMP_DTYPES)} (float16 would need gradient scaling)")
        if not 0.0 < self.tau <= 1.0:
            raise UsageError(f"learner config: tau must be in (0, 1], got {self.tau}")
        if self.use_cuda_graphs and not self.use_compile:
            raise UsageError("learner config: algo.use_cuda_graphs=true needs algo.use_compile=true "
                             "(CUDA graphs come from torch.compile mode 'reduce-overhead')")

    @property
    def network_batch(self) -> int:
        """Rows the networks see per update: the sampled learner batch, doubled by the mirror with use_symmetry."""
        return self.learner_batch * (2 if self.use_symmetry else 1)

    @property
    def target_entropy(self) -> float:
        """Alpha is tuned toward -action_dim * target_entropy_ratio (0 for walk, -14.5 for MT)."""
        return -self.action_dim * self.target_entropy_ratio

    @property
    def actor_widths(self) -> tuple[int, int, int]:
        """512 -> 256 -> 128 for actor_hidden_dim 512."""
        h = self.actor_hidden_dim
        return (h, max(1, h // 2), max(1, h // 4))

    @property
    def critic_widths(self) -> tuple[int, int, int]:
        """768 -> 384 -> 192 for critic_hidden_dim 768."""
        h = self.critic_hidden_dim
        return (h, max(1, h // 2), max(1, h // 4))

    def summary(self) -> dict:
        return {**asdict(self), "network_batch": self.network_batch, "target_entropy": self.target_entropy,
                "actor_widths": list(self.actor_widths), "critic_widths": list(self.critic_widths)}


def learner_config(task: str, sim: str, overrides: list[str] | tuple[str, ...] = (),
                   workload: Workload | None = None) -> LearnerConfig:
    """Compose `task/sim` with `overrides` (validated by compose) into the learner's values."""
    workload = workload or compose(task, sim, overrides)
    if workload.use_symmetry and workload.symmetry_batch_multiplier != 2:
        raise UsageError(f"use_symmetry: a left/right mirror doubles each batch, so the symmetry batch multiplier "
                         f"must be 2, got {workload.symmetry_batch_multiplier}")
    cfg = _compose_cfg(task, sim, list(overrides))
    algo, training = cfg.algo, cfg.training
    try:
        return LearnerConfig(
            obs_dim=workload.obs_dim, critic_dim=workload.critic_dim, action_dim=workload.action_dim,
            learner_batch=workload.learner_batch, updates_per_step=workload.updates_per_step,
            policy_frequency=workload.policy_frequency, use_symmetry=workload.use_symmetry,
            gamma=float(algo.gamma), tau=float(algo.tau), actor_lr=float(algo.actor_lr),
            critic_lr=float(algo.critic_lr), alpha_lr=float(algo.alpha_lr), alpha_init=float(algo.alpha_init),
            target_entropy_ratio=float(algo.target_entropy_ratio), max_grad_norm=float(algo.max_grad_norm),
            actor_hidden_dim=int(algo.actor_hidden_dim), critic_hidden_dim=int(algo.critic_hidden_dim),
            num_atoms=int(algo.num_atoms), v_min=float(algo.v_min), v_max=float(algo.v_max),
            use_layer_norm=bool(algo.use_layer_norm), use_amp=bool(training.use_amp),
            amp_dtype=str(algo.amp_dtype), use_compile=bool(algo.use_compile),
            use_cuda_graphs=bool(algo.use_cuda_graphs),
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"invalid learner value after overrides {list(overrides)}: {exc}") from None
