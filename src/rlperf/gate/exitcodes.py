"""Typed exit codes of `rlperf gate`; 2 stays rlperf's usage error, so the gate's own codes skip it."""

from __future__ import annotations

from enum import IntEnum

from rlperf.errors import InfrastructureError  # re-exported: it lives in rlperf.errors now


class GateExit(IntEnum):
    """What the gate decided; when several apply, the most severe (see SEVERITY) is the exit code."""

    OK = 0
    REGRESSION = 1  # slower/bigger by more than the factor and significant, or a parity metric out of tolerance
    USAGE = 2  # bad flags or config (rlperf.errors.EXIT_USAGE)
    BENCHMARK_FAILURE = 3  # a point that ran on base (or is new) failed on head
    COVERAGE_LOSS = 4  # a point measured on base is skipped or missing on head
    INFRASTRUCTURE = 5  # unknown commit, unreadable or absent results, asv or pip could not run


# Most severe first: a broken run makes any comparison untrustworthy, a failure hides its numbers,
# lost coverage hides a possible regression.
SEVERITY = (GateExit.INFRASTRUCTURE, GateExit.BENCHMARK_FAILURE, GateExit.COVERAGE_LOSS,
            GateExit.REGRESSION, GateExit.OK)


def worst(codes) -> GateExit:
    """The most severe of `codes` (OK for none)."""
    present = set(codes)
    return next((code for code in SEVERITY if code in present), GateExit.OK)


__all__ = ["GateExit", "InfrastructureError", "SEVERITY", "worst"]
