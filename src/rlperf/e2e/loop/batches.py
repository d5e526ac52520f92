"""The e2e code's only door to the replay: build a placement, write through it, sample from it.

Everything the iteration needs from `rlperf.replay` goes through this module: placements by name from
the registry (`replay.placements.specs`), built by `replay.build.build_placement` as `rlperf replay` and
asv build them, each placement's real write path (`storage.add`, empty at start: the collector fills
it), its real sample path (`placement.sample()`, raw batch rows) and
`storage.decode` into named fields of the learner's dtype, and memory feasibility.

A placement gathers into output buffers it owns (`staging`, `target`, `out`); a one-tick prefetch
fills batch t+1 while the learner still reads batch t, so a port owns two sets of those buffers and
swaps them in before each sample.
"""

from __future__ import annotations

from rlperf.measure import guards
from rlperf.replay.build import build_placement
from rlperf.replay.placements.specs import PLACEMENTS, lookup
from rlperf.workload import Workload

OUTPUT_BUFFERS = ("staging", "target", "out")
SLOTS = 2  # batch t being read, batch t+1 being filled
HOST_STAGING = ("h2d", "h2d-pageable", "pipelined", "h2d-numba")  # transfers that gather into a host staging batch


def single_gpu_placements() -> tuple[str, ...]:
    """Every named placement that takes the loop's writes through our Storage (the peers, which own
    their storage and are written through their library's API, are not offered)."""
    return tuple(name for name, spec in PLACEMENTS.items() if not spec.parts.peer)


def replay_memory_verdict(placement: str, workload: Workload, capacity_rows: int, *, cuda: bool,
                          host_available: int, device_free: int) -> guards.Verdict:
    """Can `placement` at `capacity_rows`, its second batch slot and a resident batch fit? (bytes named)."""
    spec = lookup(placement)
    if spec.needs_cuda and not cuda:
        return guards.Verdict(False, f"placement {placement!r} needs a CUDA device; none visible")
    missing = spec.unavailable_reason()
    if missing:
        return guards.Verdict(False, missing)
    need = spec.memory_need(workload.layout, capacity_rows, workload.sample_rows_per_rank)
    batch = workload.sample_rows_per_rank * spec.stored_layout(workload.layout).batch_row_bytes
    host, device = need.host_bytes, need.device_bytes
    if cuda:
        device += 2 * batch  # the second prefetch slot + the resident baseline batch
        host += batch if spec.transfer in HOST_STAGING else 0
    else:
        host += 2 * batch
    what = f"e2e {placement} at {capacity_rows:,} rows (+ prefetch slot and resident batch)"
    verdict = guards.check_host(host, what, host_available)
    if verdict.ok and cuda and device:
        verdict = guards.check_device(device, what, device_free, "cuda:0")
    return verdict


class SwitchableWriter:
    """The collector's `replay_writer`: forwards `add` to the current placement's storage, so one
    collector (one MuJoCo model, N MjData) serves every placement of a run."""

    def __init__(self):
        self.target = None

    def add(self, **fields) -> None:
        if self.target is None:
            raise RuntimeError("no replay attached to the writer")
        self.target.add(**fields)


class ReplayPort:
    """One placement behind the e2e loop: `storage` for the collector, `sample()` for the learner."""

    def __init__(self, placement: str, workload: Workload, *, capacity_rows: int, device, threads: int, seed: int,
                 dtype=None):
        import torch

        if placement not in single_gpu_placements():
            from rlperf.errors import choice_error

            raise choice_error("placement", placement, single_gpu_placements())
        self.spec = lookup(placement)
        self.name = placement
        self.workload = workload
        self.capacity_rows = capacity_rows
        self.device = device
        self.dtype = dtype or torch.float32  # what the learner computes in; bf16 fields are cast to it
        # the placement `rlperf replay` and asv build, with this workload's overrides; empty: the collector fills it
        self.impl = build_placement(self.spec, workload, capacity_rows, device=device, threads=threads, seed=seed,
                                    prefill=False)
        self.layout = self.impl.layout  # the StorageLayout as stored
        self.storage = None
        self._slots: list[dict] = []
        self._next = 0

    def setup(self) -> None:
        """Allocate the placement (empty storage) and a second set of its output buffers."""
        import torch

        self.impl.setup()
        first = {name: getattr(self.impl, name) for name in OUTPUT_BUFFERS if hasattr(self.impl, name)}
        second = {name: torch.zeros_like(buf, pin_memory=buf.device.type == "cpu" and buf.is_pinned())
                  for name, buf in first.items()}  # zeros: pages faulted in before anything is timed
        self._slots = [first, second]
        self.storage = self.impl.storage

    def rows(self):
        """One sample as raw batch rows, gathered by the placement's own path into the next slot."""
        for name, buf in self._slots[self._next].items():
            setattr(self.impl, name, buf)
        self._next = (self._next + 1) % SLOTS
        return self.impl.sample()

    def sample(self):
        """One iteration's chunk (`updates_per_step * learner_batch` rows) as named fields on the learner
        device (views of the slot for fp32 fields, casts for bf16 ones)."""
        return self.storage.decode(self.rows(), self.dtype)

    def resident_batch(self):
        """One real batch in its own tensors, kept for the resident baseline."""
        from rlperf.replay.storage import Batch

        return Batch(*(f.clone() for f in self.sample()))

    def last_indices(self):
        return self.impl.last_indices()

    def bytes_per_sample(self) -> dict[str, int]:
        return self.impl.bytes_per_sample()

    def close(self) -> None:
        from rlperf.replay.tables import release_tables

        self.storage = None
        self._slots = []
        self.impl = None
        release_tables()
