"""Skip one asv point from inside a benchmark body, with its reason in the log like a setup skip.

asv_runner turns `SkipNotImplemented` raised in the body into n/a (a plain NotImplementedError there
is a failure), but prints no reason; this prints the line asv_runner prints for a skip in setup, so the
run's summary (rlperf.asvtools.run_summary) groups it with the other skips.
"""

from __future__ import annotations

from asv_runner.benchmarks.mark import SkipNotImplemented


def skip_point(reason: str):
    """Raise asv's in-body skip after printing `asv: skipped: ...` with the reason."""
    print(f"asv: skipped: SkipNotImplemented({reason!r}) ", flush=True)
    raise SkipNotImplemented(reason)


__all__ = ["SkipNotImplemented", "skip_point"]
