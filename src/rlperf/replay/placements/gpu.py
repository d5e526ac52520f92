"""GPU-resident replay: the ring lives in HBM; device randint + index_select(out=) on a side stream.

The `gpu-padded` spec stores rows padded to a 16-byte multiple (930 -> 932 floats), which lets PyTorch's
vectorised gather path run (limits-and-practices.md 2.1); consumers see width-W views only.
"""

from __future__ import annotations

import torch

from rlperf.replay.placements.base import Placement
from rlperf.replay.tables import filled_table

DEVICE_SEED_OFFSET = 100_000  # the reference's per-rank device generator seed is (seed + 100,000) + rank*1009


class GpuReplay(Placement):
    def setup(self) -> None:
        self.table = filled_table(self.capacity, self.layout.stored_width, device=self.device)
        self.out = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32,
                               device=self.device)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=self.device)
        self.gen = torch.Generator(device=self.device).manual_seed(self.seed + DEVICE_SEED_OFFSET)
        self.stream = torch.cuda.Stream(self.device)
        torch.cuda.synchronize(self.device)

    def gpu_sample(self) -> None:
        torch.randint(self.capacity, (self.sample_rows,), generator=self.gen, device=self.device, out=self.idx)
        torch.index_select(self.table, 0, self.idx, out=self.out)

    def sample(self) -> torch.Tensor:
        with torch.cuda.stream(self.stream):
            self.gpu_sample()
        self.stream.synchronize()
        return self.out[:, : self.layout.width]

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.stored_row_bytes
        return {"h2d": 0, "host_read": 0, "device_read": batch}
