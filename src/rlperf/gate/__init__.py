"""The PR gate: read two commits' asv results, judge each point by its direction, exit with a typed code.

Modules, one concern each: `exitcodes` (the codes and their precedence), `meta` (decorators that
benchmarks use to declare direction/tolerance), `config` (parses gate.toml: factor, passes, per-glob rules),
`results` (asv result files -> points, environment pairing, --bench selection), `significance`
(the statistics of asv's Mann–Whitney rule), `host` (same host? asv params + fingerprints), `interleave`
(k alternating base/head passes for --run), `passdir` (passes kept in a folder: --keep-passes /
--passes-from), `policy` (a point's direction, factor and tolerance), `verdict` (every decision: the
significance rule, one finding per point, the exit code), `report` (a verdict as Markdown + JSON),
`outputs` (output paths checked early, written atomically), `flow` (measure or load, then judge).
"""

from rlperf.gate.exitcodes import GateExit, InfrastructureError
from rlperf.gate.meta import higher_is_better, lower_is_better, within_tolerance

__all__ = ["GateExit", "InfrastructureError", "higher_is_better", "lower_is_better", "within_tolerance"]
