"""worker: what a rank process reports; metrics that need a device are skipped with a reason on CPU ranks."""

from __future__ import annotations

from rlperf.replay.metrics import END_TO_END, H2D
from tests.replay.multirank.tiny import cpu_run


def test_host_to_device_metrics_are_skipped_with_a_reason_on_cpu_ranks():
    skipped = {s["metric"]: s["reason"] for s in cpu_run("shared-host").skipped}
    assert set(skipped) == {H2D, END_TO_END} and all("CPU ranks" in r for r in skipped.values())
