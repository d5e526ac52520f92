"""Typed exit codes of `rlperf gate`; 2 stays rlperf's usage error, so the gate's own codes skip it.

docs/gate.md is the single description of what each code means for a user; keep the two in step.
"""

from __future__ import annotations

from enum import IntEnum

from rlperf.errors import InfrastructureError, SuiteImportError  # re-exported: they live in rlperf.errors now


class GateExit(IntEnum):
    """What the gate decided; when several apply, the most severe (see SEVERITY) is the exit code."""

    OK = 0
    REGRESSION = 1  # slower/bigger by more than the factor, or a parity metric out of tolerance
    USAGE = 2  # bad flags or config, unsafe machine name, dirty head (rlperf.errors.EXIT_USAGE)
    BENCHMARK_FAILURE = 3  # a point that ran on base (or is new) failed on head; head's suite does not import
    COVERAGE_LOSS = 4  # a point measured on base is skipped or missing on head
    INFRASTRUCTURE = 5  # unknown commit, malformed/corrupt results, nothing compared, host changed, asv/pip failed, a crash
    CHANGED_BENCHMARK = 6  # a benchmark's asv version differs between base and head (not accepted)


# Most severe first: a broken run makes any comparison untrustworthy, a failure hides its numbers,
# lost coverage and an edited benchmark both hide a possible regression.
SEVERITY = (GateExit.INFRASTRUCTURE, GateExit.BENCHMARK_FAILURE, GateExit.COVERAGE_LOSS,
            GateExit.CHANGED_BENCHMARK, GateExit.REGRESSION, GateExit.OK)


def worst(codes) -> GateExit:
    """The most severe of `codes` (OK for none)."""
    present = set(codes)
    return next((code for code in SEVERITY if code in present), GateExit.OK)


__all__ = ["GateExit", "InfrastructureError", "SEVERITY", "SuiteImportError", "worst"]
