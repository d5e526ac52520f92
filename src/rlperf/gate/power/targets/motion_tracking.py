"""--target motion-tracking: dependent sqrt per env in the g1_motion_tracking fused kernel (`_run_chunk`'s
env loop), folded into the reward as `* (1.0 + spin * 0.0)` (its fastmath set has no nnan/ninf, so the
chain stays); the point is `EnvFused.time_fused('g1_motion_tracking', 32768, 2)`, paired in a real run."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

KERNEL = "src/rlperf/envs/motion_tracking/fused.py"
ANCHOR = "        a_px, a_py, a_pz = mp[i, _A, 0], mp[i, _A, 1], mp[i, _A, 2]\n"
TERM = "        reward[i] = total * ctrl_dt\n"
FOLDED = "        reward[i] = total * ctrl_dt * (1.0 + spin * 0.0)\n"
BENCH = r"EnvFused\.time_fused\('g1_motion_tracking', 32768, 2\)"
INJECTED = r"'g1_motion_tracking'"


def inject(source: str, steps: int) -> str:
    """The motion-tracking kernel with `steps` dependent sqrt per env, the reward multiplied by exactly 1."""
    return chain.inject(source, KERNEL, ANCHOR, TERM, FOLDED, steps, indent=8)


def null_edit(source: str) -> str:
    return chain.null_edit(source, KERNEL, ANCHOR, indent=8)


TARGET = Target("motion-tracking", KERNEL, inject, null_edit, BENCH, INJECTED, "dependent sqrt per env",
                candidates=(4, 6, 8, 12, 16))
