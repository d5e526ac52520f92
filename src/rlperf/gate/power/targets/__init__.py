"""The power study's injection targets: one module per target, ONE registry (`TARGETS`) here.

A target is a real regression's shape committed into one file of a throw-away clone (`inject(source,
steps)`), results unchanged, plus a null edit of the same file (a comment), the gate's `--bench` for the
point it slows, and the regex naming that point. Targets with `candidates` are calibrated on the host
(chain_timing, one process, variants interleaved); the others need `--steps`.
"""

from __future__ import annotations

from rlperf.errors import UsageError
from rlperf.gate.power.targets import gpu_fused, motion_tracking, noise, replay_host, walk
from rlperf.gate.power.targets.base import Target

TARGETS: dict[str, Target] = {t.name: t for t in (walk.TARGET, gpu_fused.TARGET, motion_tracking.TARGET,
                                                  replay_host.TARGET, noise.TARGET)}


def target(name: str) -> Target:
    """The target called `name`; exit 2 naming the valid choices otherwise."""
    if name not in TARGETS:
        raise UsageError(f"--target {name!r}: unknown; valid targets: {', '.join(sorted(TARGETS))}")
    return TARGETS[name]


__all__ = ["TARGETS", "Target", "target"]
