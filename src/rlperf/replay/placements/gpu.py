"""Transfer `none`: the storage is on the learner's device; sample and gather there.

With the `torch` sampler: device randint + the storage's gather (`index_select(out=)` for whole rows;
two gathers and a terminal-table patch for next-obs-elided rows). With the `fused` sampler: one
kernel draws counter-based indices (splitmix64 of seed, tick, row) and copies each row with the
widest vector its alignment allows (16-byte int4 for padded rows, 8-byte float2 for 930-float rows):
no generator state, no index round trip through HBM; fp32 rows are copied by 4 warps a row (`self.launched`,
cupy_kernels.ROW_SPLITS, measured). Elided (compact) layouts have a fused kernel of
their own that reads the row, its successor's obs or its terminal row in the same pass
(`cupy_kernels.sample_compact_merge` following the `merge` plan of `replay.compact_merge`: COMPACT_MIXED).
Padded layouts store rows at a 16-byte multiple, which is what lets PyTorch's vectorised gather path run
(docs/limits.md 2.1).

Without CUDA the same code runs on the CPU (tests); timing it needs a GPU.
"""

from __future__ import annotations

import numpy as np
import torch

from rlperf.replay.placements.base import Placement
from rlperf.replay.sampler import DEVICE_SEED_OFFSET  # noqa: F401  (re-exported for the rank placements)

# How the compact kernel builds a batch vector that straddles a field boundary (compact_merge.MIXED_CHOICES):
# "merge", whole 16-byte loads joined with byte masks, measured x0.911 of "bytes" (byte by byte) on the H200
# with the same batch (docs/replay-compact-kernel.md); the kernel probe keeps "bytes" as its alternative.
COMPACT_MIXED = "merge"


class GpuReplay(Placement):
    def setup(self) -> None:
        dev = self.device or torch.device("cpu")
        self.make_storage(dev)
        self.make_sampler(dev)
        self.out = self.storage.new_batch(self.sample_rows, device=dev)
        self.idx = torch.empty(self.sample_rows, dtype=torch.int64, device=dev)
        self.stream = torch.cuda.Stream(self.device) if self.device is not None else None
        if self.device is not None:
            # Before any launch on self.stream: the prefill's last copies may still be reading a freed
            # chunk that the caching allocator has just handed to `out` (allocations are ordered on the
            # default stream only); a draw on self.stream would overwrite it and the table's last rows
            # with it (seen: wrong rows in about half of the gpu-fused-bf16 processes).
            torch.cuda.synchronize(self.device)
        if self.sampler.in_kernel and self.device is not None:
            self._setup_kernel()
        if self.device is not None:
            torch.cuda.synchronize(self.device)

    def _setup_kernel(self) -> None:
        if self.layout.elide_next:
            self._setup_compact_kernel()
            return
        row_bytes = self.layout.stored_row_bytes
        self.vec_bytes = 16 if row_bytes % 16 == 0 else 8
        if row_bytes % self.vec_bytes:
            raise NotImplementedError(f"fused sampler needs 8-byte aligned rows, got {row_bytes} B")
        from rlperf.replay.placements.cupy_kernels import ROW_SPLITS, split_build

        self.kernel = "sample_int4" if self.vec_bytes == 16 else "sample_float2"
        self.launched = split_build(self.kernel, ROW_SPLITS[self.kernel])
        self.fixed_args = self._fixed_args()
        if self.prefill:
            self.gpu_sample()  # compile outside any timing

    def _setup_compact_kernel(self) -> None:
        from rlperf.replay.compact_merge import plan_for
        from rlperf.replay.placements.cupy_kernels import COMPACT_KERNELS, COMPACT_MAX_MIXED, COMPACT_MAX_VECS

        self.plan = plan_for(self.layout, COMPACT_MIXED)
        vecs = self.plan.vectors.shape[0]
        if vecs > COMPACT_MAX_VECS or self.plan.table_blocks > COMPACT_MAX_MIXED:
            raise NotImplementedError(f"the fused compact kernel holds at most {COMPACT_MAX_VECS} vectors a row and "
                                      f"{COMPACT_MAX_MIXED} blocks of shared plan table; layout {self.layout.name!r} "
                                      f"has {vecs} and {self.plan.table_blocks} ({COMPACT_MIXED} plan)")
        self.vplan = torch.from_numpy(self.plan.vectors).to(self.device)
        self.bplan = torch.from_numpy(self.plan.mixed_bytes).reshape(-1, 4).to(self.device)
        self.kernel = self.launched = COMPACT_KERNELS[COMPACT_MIXED]
        self.fixed_args = self._fixed_args()
        if self.prefill:
            self.gpu_sample()  # compile outside any timing

    def gpu_sample(self) -> None:
        if self.sampler.in_kernel and self.device is not None:
            self._fused_sample()
            return
        self.sampler.sample(self.storage, self.idx)
        self.storage.gather(self.idx, self.out)

    def _fused_sample(self) -> None:
        from rlperf.replay.placements.cupy_kernels import launch

        launch(self.launched, self.stream, self.sample_rows, *self.kernel_args(self.sampler.next_tick()))

    def kernel_args(self, tick: int, *, step_rows: int | None = None, vplan: torch.Tensor | None = None,
                    table: torch.Tensor | None = None) -> tuple:
        """The fused kernel's arguments for draw `tick` (the kernel probe relaunches a tick with other launch
        shapes). For the compact kernel: `step_rows` moves the successor row (a diagnostic: other bytes);
        `vplan` replaces the vector plan and `table` (int4 rows, whole blocks of 16) its shared table, for a
        diagnostic plan or the `merge` plan (`replay.compact_merge`). Without those, the fixed part is the one
        built at setup (`self.fixed_args`), so a pass builds only the draw's."""
        draw = self.counter_draw_args(tick)
        if step_rows is None and vplan is None and table is None:
            return (*self.fixed_args, *draw)
        return (*self._fixed_args(step_rows=step_rows, vplan=vplan, table=table), *draw)

    def _fixed_args(self, *, step_rows: int | None = None, vplan: torch.Tensor | None = None,
                    table: torch.Tensor | None = None) -> tuple:
        """The kernel's arguments before the draw's: pointers, shapes and (compact) the plan; the same every
        pass unless a diagnostic overrides a part (`kernel_args`)."""
        if self.layout.elide_next:
            st = self.storage
            step = self.step_rows if step_rows is None else step_rows
            plan = self.vplan if vplan is None else vplan
            bplan = self.bplan if table is None else table
            blocks = self.plan.table_blocks if table is None else table.shape[0] // 16
            return (*(np.uint64(t.data_ptr()) for t in (self.table, self.idx, self.out, st.slot_of_row, st.terminal,
                                                       plan, bplan)),
                    np.int32(self.sample_rows), np.int32(self.layout.batch_row_bytes // 16), np.int32(blocks),
                    np.int32(self.layout.stored_row_bytes), np.int32(self.layout.terminal_row_bytes),
                    np.uint64(step))
        if step_rows is not None or vplan is not None or table is not None:
            raise ValueError(f"step_rows, vplan and table are the compact kernel's; layout {self.layout.name!r} "
                             "is not elided")
        return (np.uint64(self.table.data_ptr()), np.uint64(self.idx.data_ptr()), np.uint64(self.out.data_ptr()),
                np.int32(self.sample_rows), np.int32(self.layout.stored_row_bytes // self.vec_bytes))

    def sample(self) -> torch.Tensor:
        if self.stream is None:
            self.gpu_sample()
            return self.batch
        with torch.cuda.stream(self.stream):
            self.gpu_sample()
        self.stream.synchronize()
        return self.batch

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.batch_row_bytes
        out = {"h2d": 0, "host_read": 0, "device_read": batch}
        if self.sampler.in_kernel and self.layout.elide_next:  # what the compact kernel loads and stores
            from rlperf.replay.compact_merge import plan_for  # the plan it launches (set up or not)
            from rlperf.replay.compact_plan import bytes_requested

            per_row = bytes_requested(plan_for(self.layout, COMPACT_MIXED))
            out["device_moved"] = self.sample_rows * (per_row["read"] + per_row["written"])
        return out
