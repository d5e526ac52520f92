"""Transfer `uva`: a GPU kernel reads the sampled rows straight out of a pinned host storage (zero-copy).

Only the selected rows cross PCIe, no CPU core gathers, and the batch lands in device memory
(docs/limits.md 2.5). Rows are padded to 16 bytes so every thread moves one int4, whatever
the layout's dtypes (fp32 or bf16 rows).

With the `torch` sampler a pass is the device draw, then the gather (`gather_int4`): two launches whose gap the
GPU waits out (issue 23: uva-bf16's unheld device time x1.05-1.15 of its held time, H200, 2026-12-05). With the
`fused` sampler one kernel draws the counter-based rows and reads them (`sample_int4`, gpu-fused-bf16's kernel, on
the pinned table's device address): one launch a pass, no index round trip.
"""

from __future__ import annotations

import numpy as np
import torch

from rlperf.replay.placements.base import Placement
from rlperf.replay.placements.cupy_kernels import launch


class UvaReplay(Placement):
    def setup(self) -> None:
        self.make_storage()  # host-pinned
        self.make_sampler(self.device)
        self.out = self.storage.new_batch(self.sample_rows, device=self.device)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=self.device)
        self.stream = torch.cuda.Stream(self.device)
        # Fixed for the placement's life, so built once (as the batch view, `Placement.batch`): a pass's host time is
        # part of its wall time, and building these each pass took as long as CuPy's launch (issue 23, the pass
        # probe's `split` mode).
        self.gather_args = (np.uint64(self.table.data_ptr()), np.uint64(self.idx.data_ptr()),
                            np.uint64(self.out.data_ptr()), np.int32(self.sample_rows),
                            np.int32(self.layout.stored_row_bytes // 16))
        torch.cuda.synchronize(self.device)  # `out`'s zero fill (default stream) lands before any draw writes it
        if self.prefill:
            self.sample()  # compile outside any timing

    def queue(self) -> None:
        """Queue one batch on `self.stream` (the device draw, then the zero-copy gather) without waiting: `sample`
        waits for it, and the pass probe (`replay.pass_probe`) times the queueing, its parts and the wait apart."""
        if not self.sampler.in_kernel:
            self.draw()
        launch(*self.kernel_call())

    def draw(self) -> None:
        """Queue the torch sampler's device draw into `self.idx` (the fused sampler draws inside its kernel)."""
        with torch.cuda.stream(self.stream):
            self.sampler.sample(self.storage, self.idx)

    def kernel_call(self) -> tuple:
        """`cupy_kernels.launch`'s arguments for the next pass's gather: the kernel, the stream, the rows, then the
        kernel's own (the fused kernel's end with the draw's tick, so each call is the next draw)."""
        if self.sampler.in_kernel:
            return ("sample_int4", self.stream, self.sample_rows, *self.gather_args,
                    *self.counter_draw_args(self.sampler.next_tick()))
        return ("gather_int4", self.stream, self.sample_rows, *self.gather_args)

    def sample(self) -> torch.Tensor:
        self.queue()
        self.stream.synchronize()
        return self.batch

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.batch_row_bytes
        return {"h2d": batch, "host_read": batch, "device_read": 0}
