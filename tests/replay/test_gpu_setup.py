"""Device placements order their first draw after the prefill: a draw on the placement's own stream
while the default stream still copies the prefill can overwrite the freed chunk that the caching
allocator has handed to the batch buffer, and so the table's rows (docs/replay-bimodality.md).

The race itself shows only in some processes (a fresh process's first stream and allocations happen to
wait for the device), so the test checks the order: prefill, then a device synchronise, then a launch."""

from __future__ import annotations

import pytest

from rlperf.replay.cases import QUICK_CAPACITY_ROWS, ReplayCase

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", ["gpu-fused-bf16", "uva-bf16"])
def test_the_first_draw_waits_for_the_prefill(monkeypatch, name):
    import torch

    from rlperf.replay.placements import cupy_kernels
    from rlperf.replay.build import build_placement
    from rlperf.replay.run import learner_device
    from rlperf.replay.storage import Storage

    events = []
    prefill, launch, synchronize = Storage.prefill_pattern, cupy_kernels.launch, torch.cuda.synchronize

    def spy_prefill(self):
        prefill(self)
        events.append("prefill")

    def spy_launch(*args):
        events.append("launch")
        return launch(*args)

    def spy_synchronize(*args, **kwargs):
        events.append("sync")
        return synchronize(*args, **kwargs)

    monkeypatch.setattr(Storage, "prefill_pattern", spy_prefill)
    monkeypatch.setattr("rlperf.replay.placements.uva.launch", spy_launch)  # imported by name there
    monkeypatch.setattr(cupy_kernels, "launch", spy_launch)  # looked up at each draw by gpu.py
    monkeypatch.setattr(torch.cuda, "synchronize", spy_synchronize)
    case = ReplayCase("g1_motion_tracking", "motrix", name, QUICK_CAPACITY_ROWS)
    pl = build_placement(case.spec, case.workload, case.capacity_rows, device=learner_device(), threads=1, seed=0)
    pl.setup()
    pl.verify()
    after = events[events.index("prefill") + 1:]
    assert "launch" in after and "sync" in after[: after.index("launch")], events
