"""--target walk: dependent sqrt per env in the g1_walk_flat kernel, folded into the linear-velocity
reward term; the point measured is `EnvFused.time_fused('g1_walk_flat', 8192, 1)` (with probe beside it
as the unchanged point)."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

KERNEL = "src/rlperf/envs/walk/fused.py"
ANCHOR = "            ex = commands[i, 0] - linvel[i, 0]\n"
TERM_VALUE = "math.exp(-(ex * ex + ey * ey) / sigma) if s[T_LIN] != 0.0 else F0"
TERM = f"            t_lin = {TERM_VALUE}\n"
FOLDED = f"            t_lin = ({TERM_VALUE}) * (1.0 + spin * 0.0)\n"
BENCH = r"EnvFused\.time_fused\('(g1_walk_flat|probe)', 8192, [12]\)"
INJECTED = r"'g1_walk_flat'"


def inject(source: str, steps: int) -> str:
    """The walk kernel with `steps` dependent sqrt per env folded into a reward term as `1 + x * 0.0`."""
    return chain.inject(source, KERNEL, ANCHOR, TERM, FOLDED, steps, indent=12)


def null_edit(source: str) -> str:
    """The walk kernel with one more comment line: a commit that changes nothing measurable."""
    return chain.null_edit(source, KERNEL, ANCHOR, indent=12)


TARGET = Target("walk", KERNEL, inject, null_edit, BENCH, INJECTED, "dependent sqrt per env",
                candidates=(2, 3, 4, 5, 6, 7, 8, 10, 12, 16))
