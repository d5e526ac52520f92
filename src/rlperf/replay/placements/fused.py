"""GPU-resident replay with a fused sampler: indices and the row copy in one kernel.

`torch.randint` + `index_select` is two launches, an index round trip through HBM and, for
930-float rows, a gather that cannot use 16-byte vectors. Here each warp draws its row index with a
counter-based hash (splitmix64 of seed, tick, row: deterministic, no generator state) and copies the
row with the widest vector the row alignment allows: 8-byte float2 for packed 930-float rows, 16-byte
int4 for rows padded to 932. Indices are uniform over the full capacity, like the `gpu` placement.
"""

from __future__ import annotations

import numpy as np
import torch

from rlperf.measure.timing import time_cuda
from rlperf.replay.metrics import GPU_SAMPLE
from rlperf.replay.placements.base import Placement
from rlperf.replay.placements.cupy_kernels import launch
from rlperf.replay.placements.gpu import DEVICE_SEED_OFFSET, GPU_INNER
from rlperf.replay.tables import filled_table


class GpuFusedReplay(Placement):
    def setup(self) -> None:
        row_bytes = self.layout.stored_row_bytes
        self.vec_bytes = 16 if row_bytes % 16 == 0 else 8
        if row_bytes % self.vec_bytes:
            raise NotImplementedError(f"fused sampler needs 8-byte aligned rows, got {row_bytes} B")
        self.kernel = "sample_int4" if self.vec_bytes == 16 else "sample_float2"
        self.table = filled_table(self.capacity, self.layout.stored_width, device=self.device)
        self.out = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32,
                               device=self.device)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=self.device)
        self.stream = torch.cuda.Stream(self.device)
        self.tick = 0
        self.gpu_sample()  # compile outside any timing
        torch.cuda.synchronize(self.device)

    def gpu_sample(self) -> None:
        launch(self.kernel, self.stream, self.sample_rows,
               np.uint64(self.table.data_ptr()), np.uint64(self.idx.data_ptr()), np.uint64(self.out.data_ptr()),
               np.int32(self.sample_rows), np.int32(self.layout.stored_row_bytes // self.vec_bytes),
               np.uint64(self.capacity), np.uint64(self.seed + DEVICE_SEED_OFFSET), np.uint64(self.tick))
        self.tick += 1

    def sample(self) -> torch.Tensor:
        self.gpu_sample()
        self.stream.synchronize()
        return self.out[:, : self.layout.width]

    def last_indices(self) -> torch.Tensor:
        return self.idx

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        if metric != GPU_SAMPLE:
            raise KeyError(metric)
        return time_cuda(self.gpu_sample, warmup=warmup, repeat=repeat, stream=self.stream, inner=GPU_INNER)

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.stored_row_bytes
        return {"h2d": 0, "host_read": 0, "device_read": batch}
