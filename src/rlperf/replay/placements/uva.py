"""Zero-copy (UVA) gather: a GPU kernel reads the sampled rows straight out of a pinned host table.

Only the selected rows cross PCIe, no CPU core gathers, and the batch lands in device memory
(limits-and-practices.md 2.5). Rows are padded to 16 bytes so every thread moves one int4.
The kernel is compiled with CuPy's NVRTC; without CuPy the placement is skipped with that reason.
"""

from __future__ import annotations

import torch

from rlperf.measure.timing import time_wall
from rlperf.replay.metrics import END_TO_END
from rlperf.replay.placements.base import Placement
from rlperf.replay.placements.gpu import DEVICE_SEED_OFFSET
from rlperf.replay.tables import filled_table

_KERNEL = r"""
extern "C" __global__ void uva_gather(const unsigned long long table_addr, const long long* __restrict__ idx,
                                      const unsigned long long out_addr, const int rows, const int vecs) {
    const int4* __restrict__ table = reinterpret_cast<const int4*>(table_addr);
    int4* __restrict__ out = reinterpret_cast<int4*>(out_addr);
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const int4* src = table + idx[r] * (long long)vecs;
        int4* dst = out + (long long)r * vecs;
        for (int v = threadIdx.x; v < vecs; v += blockDim.x) dst[v] = src[v];
    }
}
"""
THREADS = 256


class UvaReplay(Placement):
    def setup(self) -> None:
        import cupy
        self.table = filled_table(self.capacity, self.layout.stored_width, pin_memory=True)
        self.out = torch.empty((self.sample_rows, self.layout.stored_width), dtype=torch.float32,
                               device=self.device)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=self.device)
        self.gen = torch.Generator(device=self.device).manual_seed(self.seed + DEVICE_SEED_OFFSET)
        self.stream = torch.cuda.Stream(self.device)
        self._cupy = cupy
        self._kernel = cupy.RawKernel(_KERNEL, "uva_gather")
        self._vecs = self.layout.stored_row_bytes // 16
        self.sample()  # compile outside any timing

    def sample(self) -> torch.Tensor:
        cupy = self._cupy
        with torch.cuda.stream(self.stream):
            torch.randint(self.capacity, (self.sample_rows,), generator=self.gen, device=self.device, out=self.idx)
        with cupy.cuda.ExternalStream(self.stream.cuda_stream, self.device.index or 0):
            self._kernel((min(self.sample_rows, 65535),), (THREADS,),
                         (cupy.uint64(self.table.data_ptr()), cupy.uint64(self.idx.data_ptr()),
                          cupy.uint64(self.out.data_ptr()), cupy.int32(self.sample_rows), cupy.int32(self._vecs)))
        self.stream.synchronize()
        return self.out[:, : self.layout.width]

    def last_indices(self) -> torch.Tensor:
        return self.idx

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        if metric != END_TO_END:
            raise KeyError(metric)
        return time_wall(self.sample, warmup=warmup, repeat=repeat, devices=[self.device])

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.stored_row_bytes
        return {"h2d": batch, "host_read": batch, "device_read": 0}
