"""The PR gate: read two commits' asv results, judge each point by its direction, exit with a typed code.

Modules, one concern each: `exitcodes` (the codes and their precedence), `meta` (decorators that
benchmarks use to declare direction/tolerance), `config` (gate.toml: factor and per-glob rules),
`results` (asv result files -> points), `significance` (asv's Mann–Whitney rule), `judge` (one
finding per point), `report` (Markdown + JSON verdict), `flow` (run asv per commit, then judge).
"""

from rlperf.gate.exitcodes import GateExit, InfrastructureError
from rlperf.gate.meta import higher_is_better, lower_is_better, within_tolerance

__all__ = ["GateExit", "InfrastructureError", "higher_is_better", "lower_is_better", "within_tolerance"]
