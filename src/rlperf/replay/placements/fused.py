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

from rlperf.replay.placements.cupy_kernels import launch
from rlperf.replay.placements.gpu import DEVICE_SEED_OFFSET, GpuReplay


class GpuFusedReplay(GpuReplay):
    """GpuReplay with its two-launch sampler replaced by one kernel; sampling, timing and bytes shared."""

    def setup(self) -> None:
        super().setup()
        row_bytes = self.layout.stored_row_bytes
        self.vec_bytes = 16 if row_bytes % 16 == 0 else 8
        if row_bytes % self.vec_bytes:
            raise NotImplementedError(f"fused sampler needs 8-byte aligned rows, got {row_bytes} B")
        self.kernel = "sample_int4" if self.vec_bytes == 16 else "sample_float2"
        self.tick = 0
        self.gpu_sample()  # compile outside any timing
        torch.cuda.synchronize(self.device)

    def gpu_sample(self) -> None:
        launch(self.kernel, self.stream, self.sample_rows,
               np.uint64(self.table.data_ptr()), np.uint64(self.idx.data_ptr()), np.uint64(self.out.data_ptr()),
               np.int32(self.sample_rows), np.int32(self.layout.stored_row_bytes // self.vec_bytes),
               np.uint64(self.capacity), np.uint64(self.seed + DEVICE_SEED_OFFSET), np.uint64(self.tick))
        self.tick += 1
