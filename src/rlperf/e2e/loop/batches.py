"""The e2e code's only door to the replay: build a placement, write through it, sample from it.

Everything the iteration needs from `rlperf.replay` goes through this module (placements by name,
their real write path, their real sample path, memory feasibility), so it can be re-wired to the
storage x sampler x transfer registry without touching the loop.

Today's placements gather into output buffers they own (`staging`, `target`, `out`); a one-tick
prefetch must fill batch t+1 while the learner still reads batch t, so a port owns two sets of those
buffers and swaps them in before each sample. Writes go through `ReplayStorage.add` over the
placement's own table: host placements (host, uva, gpu-cache) write to their host table, device
rings to device memory (the H2D of the new chunk is part of the add).
"""

from __future__ import annotations

from rlperf.measure import guards
from rlperf.replay.layout import RowLayout
from rlperf.replay.placements import SPECS
from rlperf.workload import Workload

OUTPUT_BUFFERS = ("staging", "target", "out")
SLOTS = 2  # batch t being read, batch t+1 being filled


def single_gpu_placements() -> tuple[str, ...]:
    """Every placement that serves one learner in one process and takes the loop's writes through our
    Storage (the multi-rank ones and the peers, which own their storage, are not)."""
    return tuple(name for name, spec in SPECS.items() if not spec.parts.peer)


def replay_memory_verdict(placement: str, workload: Workload, capacity: int, *, cuda: bool,
                          host_available: int, device_free: int) -> guards.Verdict:
    """Can `placement` at `capacity` rows, its second batch slot and a resident batch fit? (bytes named)."""
    spec = SPECS[placement]
    if spec.needs_cuda and not cuda:
        return guards.Verdict(False, f"placement {placement!r} needs a CUDA device; none visible")
    missing = spec.unavailable_reason()
    if missing:
        return guards.Verdict(False, missing)
    need = spec.memory_need(workload.layout, capacity, workload.sample_rows_per_rank)
    batch = workload.sample_rows_per_rank * spec.stored_layout(workload.layout).stored_row_bytes
    host, device = need.host_bytes, need.device_bytes
    if cuda:
        device += 2 * batch  # the second prefetch slot + the resident baseline batch
        host += batch if "staging" in _gathers_on_host(placement) else 0
    else:
        host += 2 * batch
    what = f"e2e {placement} at {capacity:,} rows (+ prefetch slot and resident batch)"
    verdict = guards.check_host(host, what, host_available)
    if verdict.ok and cuda and device:
        verdict = guards.check_device(device, what, device_free, "cuda:0")
    return verdict


def _gathers_on_host(placement: str) -> tuple[str, ...]:
    return ("staging",) if placement.startswith("host") else ()


class SwitchableWriter:
    """The collector's `replay_writer`: forwards `add` to the current placement's storage, so one
    collector (one MuJoCo model, N MjData) serves every placement of a run."""

    def __init__(self):
        self.target = None

    def add(self, **fields) -> None:
        if self.target is None:
            raise RuntimeError("no replay attached to the writer")
        self.target.add(**fields)

    @property
    def rows_written(self) -> int:
        return 0 if self.target is None else self.target.ptr


class ReplayPort:
    """One placement behind the e2e loop: `writer` for the collector, `sample()` for the learner."""

    def __init__(self, placement: str, workload: Workload, *, capacity: int, device, threads: int, seed: int):
        if placement not in single_gpu_placements():
            from rlperf.errors import choice_error

            raise choice_error("placement", placement, single_gpu_placements())
        self.spec = SPECS[placement]
        self.name = placement
        self.workload = workload
        self.capacity = capacity
        self.device = device
        self.impl = self.spec.load()(spec=self.spec, layout=workload.layout, capacity=capacity,
                                     sample_rows=workload.sample_rows_per_rank, device=device,
                                     threads=threads, seed=seed)
        self.layout: RowLayout = self.impl.layout  # as stored (padded where the placement pads)
        self.storage = None
        self._slots: list[dict] = []
        self._next = 0

    def setup(self) -> None:
        """Allocate the placement (every page written), a second set of output buffers, the storage."""
        import torch

        from rlperf.replay.storage import ReplayStorage

        self.impl.setup()
        first = {name: getattr(self.impl, name) for name in OUTPUT_BUFFERS if hasattr(self.impl, name)}
        second = {name: torch.empty(buf.shape, dtype=buf.dtype, device=buf.device,
                                    pin_memory=buf.device.type == "cpu" and buf.is_pinned())
                  for name, buf in first.items()}
        for buf in second.values():
            buf.zero_()  # fault the pages in before anything is timed
        self._slots = [first, second]
        storage = ReplayStorage(self.layout, 1, device=self.impl.table.device)  # adopts the placement's table
        storage.table, storage.capacity = self.impl.table, self.capacity
        storage.size = self.capacity  # the placement prefilled every row with its pattern
        self.storage = storage

    def sample(self):
        """One iteration's chunk (`updates_per_step * learner_batch` rows) as named views on the learner
        device, gathered by the placement's own sample path into the next output slot."""
        from rlperf.replay.storage import field_views

        for name, buf in self._slots[self._next].items():
            setattr(self.impl, name, buf)
        self._next = (self._next + 1) % SLOTS
        return field_views(self.impl.sample(), self.layout)

    def resident_batch(self):
        """One real batch copied into its own packed device tensor, kept for the resident baseline."""
        from rlperf.replay.storage import field_views

        return field_views(self.impl.sample().clone(), self.layout)

    def bytes_per_sample(self) -> dict[str, int]:
        return self.impl.bytes_per_sample()

    def close(self) -> None:
        from rlperf.replay.tables import release_tables

        self.storage = None
        self._slots = []
        self.impl = None
        release_tables()
