"""TorchRL's `ReplayBuffer` behind the `Placement` contract: the peer users would pick instead.

Configured as TorchRL's documentation recommends for speed: `LazyTensorStorage(capacity, device=...)`
(contiguous preallocated storage; on the learner's GPU for the device peers), `RandomSampler`
(uniform with replacement, indices drawn on the storage's device by a seeded generator), `batch_size`
given at construction, and for host storage `pin_memory=True` (the buffer pins each sample so the
H2D copy can be asynchronous) plus `prefetch` (the next batches are sampled on worker threads).
Rows go in through the buffer's own `extend` (round-robin writer), either as packed float32 rows or
as TensorDict fields in TorchRL's transition convention ("next" holds next obs, reward and flags).
"""

from __future__ import annotations

import torch

from rlperf.measure.timing import time_wall
from rlperf.replay.metrics import CPU_SAMPLE
from rlperf.replay.placements.base import Placement
from rlperf.replay.tables import _pattern_row, fill_pattern_
from rlperf.row_layout import FIELD_ORDER

PREFETCH = 2  # batches sampled ahead on worker threads (host storage only)
FILL_ROWS = 2**16  # rows per `extend` while filling, so the fill never holds a second table
DEVICE_SEED_OFFSET = 100_000  # as the built-in GPU placements: device generators use seed + 100,000

# Packed-layout field -> TensorDict key (TorchRL convention: what follows the step lives under "next").
FIELD_KEYS = {"obs": "obs", "next_obs": ("next", "obs"), "actions": "action", "reward": ("next", "reward"),
              "done": ("next", "done"), "truncated": ("next", "truncated"), "critic": "critic",
              "next_critic": ("next", "critic")}


class TorchRLPeer(Placement):
    """Shared set-up, fill, sampling and row-by-row verification of the four TorchRL peers."""

    on_device = False  # storage on the learner GPU (else host memory)
    fields = False  # TensorDict fields (else one packed float32 row per transition)

    def setup(self) -> None:
        from torchrl.data import LazyTensorStorage, RandomSampler, ReplayBuffer, TensorDictReplayBuffer

        torch.set_num_threads(self.threads)
        self.cuda = self.device is not None and self.device.type == "cuda"
        if self.on_device and not self.cuda:
            raise NotImplementedError(f"{self.name} keeps its storage on the GPU; no CUDA device visible")
        self.storage_device = self.device if self.on_device else torch.device("cpu")
        seed = self.seed + (DEVICE_SEED_OFFSET if self.on_device else 0)
        gen = torch.Generator(device=self.storage_device).manual_seed(seed)
        buffer = TensorDictReplayBuffer if self.fields else ReplayBuffer
        host_to_gpu = self.cuda and not self.on_device
        self.prefetching = not self.on_device
        self.rb = buffer(storage=LazyTensorStorage(self.capacity_rows, device=self.storage_device),
                         sampler=RandomSampler(), batch_size=self.sample_rows, generator=gen,
                         pin_memory=host_to_gpu, prefetch=PREFETCH if self.prefetching else None)
        self.written = 0
        for start in range(0, self.capacity_rows if self.prefill else 0, FILL_ROWS):
            n = min(FILL_ROWS, self.capacity_rows - start)
            self.add(torch.empty((n, self.layout.width), dtype=torch.float32, device=self.storage_device),
                     pattern=True)
        self.stream = torch.cuda.Stream(self.device) if self.cuda else None
        if self.cuda:
            torch.cuda.synchronize(self.device)

    # ---- write ------------------------------------------------------------------------------------
    def add(self, rows: torch.Tensor, *, pattern: bool = False) -> None:
        """Append packed rows through the buffer's writer (wrapping at capacity); with `pattern`, first
        overwrite them with the checkable pattern carrying their write ids (replay.tables)."""
        if pattern:
            fill_pattern_(rows, first_id=self.written)
        self.rb.extend(self._to_fields(rows) if self.fields else rows)
        self.written += rows.shape[0]

    def _to_fields(self, rows: torch.Tensor):
        from tensordict import TensorDict

        td = TensorDict({}, batch_size=[rows.shape[0]], device=rows.device)
        for name, (lo, hi) in self.layout.dims.offsets().items():
            td.set(FIELD_KEYS[name], rows[:, lo:hi].contiguous())
        return td

    def _to_rows(self, data) -> torch.Tensor:
        """The packed (S, W) view of a sample (a copy for TensorDict samples)."""
        if not self.fields:
            return data
        return torch.cat([data.get(FIELD_KEYS[name]) for name in FIELD_ORDER], dim=1)

    # ---- sample -----------------------------------------------------------------------------------
    def cpu_sample(self):
        """The buffer's own sample: indices + gather (+ pinning for a GPU learner), on its storage device."""
        data, info = self.rb.sample(return_info=True)
        self.idx = info["index"]
        return data

    def sample(self):
        data = self.cpu_sample()
        if self.cuda and not self.on_device:
            data = data.to(self.device, non_blocking=True)
        return data

    def gpu_sample(self) -> None:
        self.cpu_sample()

    def measure(self, metric: str, *, warmup: int, repeat: int) -> list[float]:
        if metric == CPU_SAMPLE and metric in self.metrics:
            return time_wall(self.cpu_sample, warmup=warmup, repeat=repeat)
        return super().measure(metric, warmup=warmup, repeat=repeat)

    @property
    def storage_bytes(self) -> int:
        """LazyTensorStorage preallocates every row at the first extend (fields or packed: the same bytes)."""
        return self.capacity_rows * self.layout.stored_row_bytes

    def bytes_per_sample(self) -> dict[str, int]:
        batch = self.sample_rows * self.layout.row_bytes
        if self.on_device:
            return {"h2d": 0, "host_read": 0, "device_read": batch}
        return {"h2d": batch if self.cuda else 0, "host_read": batch, "device_read": 0}

    # ---- integrity --------------------------------------------------------------------------------
    def expected_ids(self, idx: torch.Tensor) -> torch.Tensor:
        """Write id held by each storage slot: the newest id written there (ids run 0, 1, ... in order)."""
        idx = idx.to("cpu", torch.int64)
        return idx + self.capacity_rows * torch.div(self.written - 1 - idx, self.capacity_rows, rounding_mode="floor")

    def verify(self) -> None:
        """Every sampled row equals, column for column, the row written to the slot its index names.

        With prefetch, up to PREFETCH queued batches were sampled before the latest write and show the
        storage as it was then; they are drawn and dropped so the checked batch sees the newest rows.
        """
        for _ in range(PREFETCH if self.prefetching else 0):
            self.sample()
        data = self.sample()
        if self.cuda:
            torch.cuda.synchronize(self.device)
        rows = self._to_rows(data).cpu()
        want = _pattern_row(self.layout.width, "cpu").expand(self.sample_rows, -1).clone()
        want.view(torch.int32)[:, 0] = self.expected_ids(self.last_indices()).to(torch.int32)
        if rows.shape != want.shape or not torch.equal(rows, want):
            raise AssertionError(f"{self.name}: sampled rows differ from the rows written at their indices")


class TorchRLHostPacked(TorchRLPeer):
    pass


class TorchRLHostFields(TorchRLPeer):
    fields = True


class TorchRLDevicePacked(TorchRLPeer):
    on_device = True


class TorchRLDeviceFields(TorchRLPeer):
    on_device = True
    fields = True
