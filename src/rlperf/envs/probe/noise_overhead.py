"""The probe's in-kernel noise overhead: `rlperf.envs.noise_overhead` with the task fixed to the probe.

Kept so the old command and callers keep working:

    python -m rlperf.envs.probe.noise_overhead --num-envs 8192 --threads 1 --rounds 50   (bad input: exit 2)
"""

from __future__ import annotations

from rlperf.envs import noise_overhead
from rlperf.envs.noise_overhead import ARMS

__all__ = ["ARMS", "main", "measure"]


def measure(num_envs: int, threads: int, *, rounds: int = 50, warmup: int = 3, seed: int = 0) -> dict:
    """`noise_overhead.measure` for the probe."""
    return noise_overhead.measure(num_envs, threads, task="probe", rounds=rounds, warmup=warmup, seed=seed)


def main(argv=None) -> int:
    return noise_overhead.main(argv, task="probe")


if __name__ == "__main__":
    raise SystemExit(main())
