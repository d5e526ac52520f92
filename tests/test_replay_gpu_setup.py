"""Device placements order their first draw after the prefill: a draw on the placement's own stream
while the default stream still copies the prefill would overwrite the freed chunk that the caching
allocator has handed to the batch buffer (docs/replay-bimodality.md)."""

from __future__ import annotations

import pytest

from rlperf.replay.cases import QUICK_CAPACITY_ROWS, ReplayCase

pytestmark = pytest.mark.gpu

SLOW_PREFILL_CYCLES = 100_000_000  # ~50 ms of GPU spin after the prefill, on the default stream


@pytest.mark.parametrize("name", ["gpu-fused-bf16", "uva-bf16"])
def test_the_first_draw_waits_for_the_prefill(monkeypatch, name):
    import torch

    from rlperf.replay.placements import cupy_kernels
    from rlperf.replay.run import build_placement
    from rlperf.replay.storage import Storage

    prefill = Storage.prefill_pattern

    def slow_prefill(self):
        prefill(self)
        torch.cuda._sleep(SLOW_PREFILL_CYCLES)  # the prefill still running when setup goes on

    busy_at_launch = []
    launch = cupy_kernels.launch

    def checked_launch(*args):
        busy_at_launch.append(not torch.cuda.default_stream().query())
        return launch(*args)

    monkeypatch.setattr(Storage, "prefill_pattern", slow_prefill)
    monkeypatch.setattr("rlperf.replay.placements.uva.launch", checked_launch)  # imported by name there
    monkeypatch.setattr(cupy_kernels, "launch", checked_launch)  # looked up at each draw by gpu.py
    pl = build_placement(ReplayCase("g1_motion_tracking", "motrix", name, QUICK_CAPACITY_ROWS), threads=1, seed=0)
    pl.setup()
    pl.verify()
    assert busy_at_launch and not any(busy_at_launch)
