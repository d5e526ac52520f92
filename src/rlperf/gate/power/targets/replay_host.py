"""--target replay-host: one more in-place elementwise pass over the first `steps` rows of the gathered
batch (`out[:steps].view(torch.int32).add_(0)`: the shape of a fix-up pass added after the gather; on an
integer view, so every bit is unchanged whatever the row words hold) in the host placement's CPU sample;
the point is
`ReplayCpuSample.track_ms(20, 'host', 1)` (32,768 rows of 3,720 B gathered from 2^20)."""

from __future__ import annotations

from rlperf.gate.power.targets import chain
from rlperf.gate.power.targets.base import Target

PLACEMENT = "src/rlperf/replay/placements/host.py"
ANCHOR = ("    def cpu_sample(self) -> torch.Tensor:\n"
          "        self.sampler.sample(self.storage, self.idx)\n"
          "        return self.gather(self.idx, self.staging)\n")
BENCH = r"ReplayCpuSample\.track_ms\(20, 'host', 1\)"
INJECTED = r"'host'"


def inject(source: str, steps: int) -> str:
    """The CPU sample with one more in-place pass (+ 0 on the words) over its first `steps` rows."""
    chain.check(source, PLACEMENT, ANCHOR)
    return source.replace(ANCHOR, "    def cpu_sample(self) -> torch.Tensor:\n"
                                  "        self.sampler.sample(self.storage, self.idx)\n"
                                  "        out = self.gather(self.idx, self.staging)\n"
                                  f"        out[:{steps}].view(torch.int32).add_(0)  # {chain.MARK}\n"
                                  "        return out\n")


def null_edit(source: str) -> str:
    chain.check(source, PLACEMENT, ANCHOR)
    return source.replace(ANCHOR, ANCHOR.replace("        return", f"        {chain.NULL}\n        return"))


TARGET = Target("replay-host", PLACEMENT, inject, null_edit, BENCH, INJECTED, "rows re-scaled after the gather",
                candidates=(1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384))
