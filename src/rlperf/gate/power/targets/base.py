"""What an injection target is (the registry is the package's `TARGETS`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Target:
    """A real regression's shape committed into one file (`inject(source, steps)`, results unchanged), a
    null edit of the same file, the gate's default `--bench` and the regex of the point it slows."""

    name: str
    path: str  # the file the arms edit, relative to the repository root
    inject: Callable[[str, int], str]
    null_edit: Callable[[str], str]
    bench: str  # default --bench: what each gate session measures
    injected: str  # default --injected: regex of the point(s) the injection slows
    step: str  # what one step is, for the report
    candidates: tuple[int, ...] = ()  # chain_timing's candidate steps; () = not calibrated, --steps needed


__all__ = ["Target"]
