"""--target gpu-fused: tiny launches on the fused GPU gather's stream (a real regression's shape: one more
kernel per sample), results unchanged (`idx.add_(0)`). Not calibrated here: give --steps."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

GPU_FILE = "src/rlperf/replay/placements/gpu.py"
# the fused sample's one launch line (the packed and compact kernels both launch through it)
GPU_ANCHOR = "        launch(self.launched, self.stream, self.sample_rows, *self.kernel_args(self.sampler.next_tick()))\n"
BENCH = r"ReplayGpuSample\.track_ms\(20, '(gpu-fused|gpu)', 1\)"
INJECTED = r"'gpu-fused'"


def inject(source: str, steps: int) -> str:
    """The fused GPU gather with `steps` more launches per sample (`idx.add_(0)`: 256 KiB, same result)."""
    chain.check(source, GPU_FILE, GPU_ANCHOR)
    extra = (f"        for _ in range({steps}):  # {chain.MARK}\n"
             "            self.idx.add_(0)\n")
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + extra)


def null_edit(source: str) -> str:
    chain.check(source, GPU_FILE, GPU_ANCHOR)
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + "        " + chain.NULL + "\n")


TARGET = Target("gpu-fused", GPU_FILE, inject, null_edit, BENCH, INJECTED, "extra launches per sample")
