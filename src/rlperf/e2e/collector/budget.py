"""One thread budget for the collector: physics, Numba and torch pools, recorded with every result.

Why: Numba `prange` threads plus torch intra-op threads above the core count made the reference
collector 2.5-2.8x slower (docs/workloads.md C8, docs/limits.md 3.2). The split is data, applied on the thread that
launches the kernels (Numba's mask is thread-local) and stored in the collector's meta.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rlperf.envs.threads import available_cores


@dataclass(frozen=True)
class ThreadBudget:
    """Pool sizes for the three phases that run threads: MuJoCo stepping, update_state, policy."""

    physics_threads: int
    numba_threads: int
    torch_threads: int

    def __post_init__(self) -> None:
        for name in ("physics_threads", "numba_threads", "torch_threads"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"ThreadBudget.{name} must be a positive integer, got {value!r}")

    @classmethod
    def split(cls, cores: int | None = None) -> "ThreadBudget":
        """The default split: physics gets every core (it runs alone), Numba and torch share them disjointly."""
        cores = cores or available_cores()
        numba_threads = max(1, cores // 2)
        return cls(physics_threads=cores, numba_threads=numba_threads,
                   torch_threads=max(1, cores - numba_threads))

    @property
    def oversubscribed(self) -> bool:
        """Numba + torch above the cores: the pitfall of C8 (physics runs in its own phase, so it is left out)."""
        return self.numba_threads + self.torch_threads > available_cores()

    def apply(self) -> dict:
        """Set the Numba mask (on this, the launching thread) and torch's pool; returns what is in effect."""
        import numba
        import torch

        from rlperf.envs.threads import max_numba_threads

        numba.set_num_threads(min(self.numba_threads, max_numba_threads()))
        torch.set_num_threads(self.torch_threads)
        return {**asdict(self), "cores": available_cores(), "numba_in_effect": numba.get_num_threads(),
                "torch_in_effect": torch.get_num_threads(), "oversubscribed": self.oversubscribed}

    def restore_torch(self) -> None:
        """Put torch's pool back to its share if something (the walk runner re-splits cores) changed it."""
        import torch

        if torch.get_num_threads() != self.torch_threads:
            torch.set_num_threads(self.torch_threads)

    def as_dict(self) -> dict:
        return asdict(self)
