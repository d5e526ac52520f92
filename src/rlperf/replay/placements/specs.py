"""The placement registry: a placement is a named combination of storage x sampler x transfer.

Torch-free, so the asv suite decides skips in a fraction of a second (it spawns a process per point)
and loads an implementation only for points that run.

- **storage** `<kind>-<layout>`: kind in `host`, `host-pinned`, `device` (replay.storage); layout a
  name of `replay.layouts.LAYOUTS` (fp32, fp32-padded, bf16, compact, ...).
- **sampler**: `torch` (generator randint) or `fused` (counter-based, drawn inside the gather kernel).
- **transfer**: how a batch reaches the learner: `none` (device storage), `h2d` (pinned staging, copy
  stream), `h2d-numba` (`h2d` with the Numba row gather), `h2d-pageable`, `pipelined` (8 chunks), `uva`
  (zero-copy kernel), `cache` (GPU cache, bulk refresh). Each transfer is one class in this package.

`PLACEMENTS` holds the named combinations (the historical names keep working); `combination(...)`
builds any other valid one from configuration (`storage=device-bf16,sampler=fused`), and
`valid_combinations(...)` lists the valid ones only. The CLI, asv and pytest-benchmark (and the e2e
iteration) resolve names through `lookup`.

Adding a placement: a new way of moving batches is one `Transfer` entry (its class in this package,
subclassing `base.Placement`: `setup` builds `self.make_storage()` / `self.make_sampler()`, `sample`
returns batch rows, `bytes_per_sample` says what moved) plus a named `PlacementSpec`; a new row format
is one `layouts.LAYOUTS` entry, which every valid transfer then serves without new code. A peer library
with its own storage (TorchRL) is a Transfer whose class wraps that library, with `kinds` saying which
storage kinds it stands for, `layouts` the row formats it stores, `requires` its optional modules (a
missing one is a skip with the reason, never a crash) and `peer` the library's name. The reference
benchmark's own host method is a peer too (`reference-host`, peer "reference"): the bar `host` must beat.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from itertools import product

from rlperf.errors import UsageError, choice_error
from rlperf.replay.layouts import LAYOUTS, StorageLayout, storage_layout
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.row_layout import RowLayout

INDEX_BYTES = 8  # int64 sample indices
CACHE_ROWS_MAX = 2**22  # gpu-cache: M, the cached rows (15.6 GB of padded motion-tracking rows)
REFRESH_PERIOD = 256  # gpu-cache: K, learner iterations per full cache refresh
STORAGE_KINDS = ("host-pinned", "host", "device")  # longest prefix first, for parsing
SAMPLER_NAMES = ("torch", "fused")


@dataclass(frozen=True)
class MemoryNeed:
    host_bytes: int
    device_bytes: int


def _host_gather(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """Host table + host staging batch + indices; one device batch."""
    return MemoryNeed(lay.table_bytes(capacity_rows) + s * lay.batch_row_bytes + s * INDEX_BYTES,
                      s * lay.batch_row_bytes)


def _device_ring(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """The reference guard: device table + two batches + indices."""
    return MemoryNeed(0, lay.table_bytes(capacity_rows) + 2 * s * lay.batch_row_bytes + s * INDEX_BYTES)


def _zero_copy(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """Pinned host table; device batch + indices."""
    return MemoryNeed(lay.table_bytes(capacity_rows), s * lay.batch_row_bytes + s * INDEX_BYTES)


def _device_cache(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """Pinned host table; device cache of min(C, M) rows + batch + indices."""
    return MemoryNeed(lay.table_bytes(capacity_rows),
                      min(capacity_rows, CACHE_ROWS_MAX) * lay.stored_row_bytes + s * lay.batch_row_bytes
                      + s * INDEX_BYTES)


def _torchrl_host(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """Host storage + the batch TorchRL allocates per sample + its indices; one device copy of the batch."""
    return MemoryNeed(lay.table_bytes(capacity_rows) + s * lay.batch_row_bytes + s * INDEX_BYTES,
                      s * lay.batch_row_bytes)


def _torchrl_device(lay: StorageLayout, capacity_rows: int, s: int) -> MemoryNeed:
    """Device storage + the batch TorchRL allocates per sample + its indices (there and on the host)."""
    return MemoryNeed(s * INDEX_BYTES, lay.table_bytes(capacity_rows) + s * lay.batch_row_bytes + s * INDEX_BYTES)


@dataclass(frozen=True)
class Transfer:
    name: str
    summary: str
    impl: str  # "module:Class", imported only when the placement runs
    metrics: tuple[str, ...]
    memory: object  # (StorageLayout, capacity_rows, sample_rows) -> MemoryNeed
    kinds: tuple[str, ...]  # storage kinds it reads from
    samplers: tuple[str, ...] = ("torch",)
    needs_cuda: bool = False
    aligned_16: bool = False  # reads rows with 16-byte vectors
    elision: bool = True  # can serve next-obs-elided layouts
    requires: tuple[str, ...] = ()  # optional modules; missing ones make the point a skip with the reason
    layouts: tuple[str, ...] | None = None  # the row formats it stores (None: every layout)
    peer: str | None = None  # the library (or reference method) a peer transfer wraps: its own storage and API


_P = "rlperf.replay.placements."
_T = "rlperf.replay.peers.torchrl_peer:"
_R = "rlperf.replay.peers.reference_host:"
TORCHRL_REQUIRES = ("torchrl", "tensordict")


def _torchrl(name: str, kind: str, cls: str, rows: str) -> Transfer:
    """A TorchRL peer: its ReplayBuffer on `kind` storage, fp32 rows only (the peer writes packed fp32)."""
    host = kind == "host"
    how = "its sample pinned by the buffer, then H2D" if host else "LazyTensorStorage on the learner GPU"
    return Transfer(name, f"TorchRL ReplayBuffer of {rows}: {how}", _T + cls,
                    (CPU_SAMPLE, END_TO_END) if host else (GPU_SAMPLE,), _torchrl_host if host else _torchrl_device,
                    (kind,), needs_cuda=not host, requires=TORCHRL_REQUIRES, layouts=("fp32",), peer="torchrl")


TRANSFERS: dict[str, Transfer] = {t.name: t for t in (
    Transfer("h2d", "CPU gather (torch threads) -> pinned staging -> H2D on a copy stream", _P + "host:HostReplay",
             (CPU_SAMPLE, H2D, END_TO_END), _host_gather, ("host",)),
    Transfer("h2d-pageable", "CPU gather -> pageable staging -> H2D (driver bounce buffers)",
             _P + "host:HostPageableReplay", (CPU_SAMPLE, H2D, END_TO_END), _host_gather, ("host",)),
    Transfer("pipelined", "8-chunk pipeline: CPU gather of chunk k+1 overlaps the H2D of chunk k (pinned)",
             _P + "host:HostPipelinedReplay", (END_TO_END,), _host_gather, ("host",)),
    Transfer("uva", "a GPU gather kernel reads the pinned host table directly (zero-copy, no CPU gather)",
             _P + "uva:UvaReplay", (END_TO_END,), _zero_copy, ("host-pinned",), samplers=SAMPLER_NAMES,
             needs_cuda=True, aligned_16=True, elision=False, requires=("cupy",)),
    Transfer("none", "the table is on the learner's device: sample and gather there", _P + "gpu:GpuReplay",
             (GPU_SAMPLE,), _device_ring, ("device",), samplers=SAMPLER_NAMES, needs_cuda=True),
    Transfer("cache", f"GPU cache of min(C, {CACHE_ROWS_MAX:,}) rows of the pinned host table, 1/{REFRESH_PERIOD} "
             "refreshed per iteration by DMA, overlapped with the cache gather", _P + "cache:GpuCacheReplay",
             (END_TO_END,), _device_cache, ("host-pinned",), needs_cuda=True, aligned_16=True, elision=False),
    _torchrl("torchrl-pinned", "host", "TorchRLHostPacked", "packed rows"),
    _torchrl("torchrl-td-pinned", "host", "TorchRLHostFields", "TensorDict fields"),
    _torchrl("torchrl", "device", "TorchRLDevicePacked", "packed rows"),
    _torchrl("torchrl-td", "device", "TorchRLDeviceFields", "TensorDict fields"),
    Transfer("reference-h2d", "the reference benchmark's host path: randint(capacity) into a preallocated index "
             "tensor, index_select(out=) into pinned staging on torch's threads, copy_(non_blocking) on a side stream",
             _R + "ReferenceHost", (CPU_SAMPLE, H2D, END_TO_END), _host_gather, ("host",), layouts=("fp32",),
             peer="reference"),
    Transfer("h2d-numba", "CPU gather by the Numba row-gather kernel (host_gather \"plain\", Numba threads) -> "
             "pinned staging -> H2D on a copy stream", _P + "host:HostNumbaReplay", (CPU_SAMPLE, H2D, END_TO_END),
             _host_gather, ("host",), elision=False, requires=("numba",)),
)}


def split_storage(storage: str) -> tuple[str, str]:
    """`host-pinned-bf16` -> ("host-pinned", "bf16"), with a clear error for anything else."""
    for kind in STORAGE_KINDS:
        if storage.startswith(kind + "-") and storage[len(kind) + 1:] in LAYOUTS:
            return kind, storage[len(kind) + 1:]
    valid = [f"{k}-{lay}" for k in sorted(STORAGE_KINDS) for lay in LAYOUTS]
    raise choice_error("storage", storage, valid)


def invalid_reason(storage: str, sampler: str, transfer: str) -> str | None:
    """Why storage x sampler x transfer is not a valid combination, else None."""
    kind, layout = split_storage(storage)
    if sampler not in SAMPLER_NAMES:
        return f"unknown sampler {sampler!r}; valid: {', '.join(SAMPLER_NAMES)}"
    if transfer not in TRANSFERS:
        return f"unknown transfer {transfer!r}; valid: {', '.join(TRANSFERS)}"
    t = TRANSFERS[transfer]
    if kind not in t.kinds:
        return f"transfer {transfer!r} reads {' or '.join(t.kinds)} storage, not {kind!r}"
    if t.layouts is not None and layout not in t.layouts:
        return f"transfer {transfer!r} stores {', '.join(t.layouts)} rows, not layout {layout!r}"
    if sampler not in t.samplers:
        return f"transfer {transfer!r} samples with {', '.join(t.samplers)}, not {sampler!r}"
    _vec, _act, _flags, elide, align, _field_align = LAYOUTS[layout]
    if elide and not t.elision:
        return f"layout {layout!r} elides next_obs: {transfer!r} copies whole rows"
    if t.aligned_16 and (align == 0 or align % 16):
        return f"transfer {transfer!r} reads 16-byte vectors; layout {layout!r} is not padded to 16 bytes"
    return None


@dataclass(frozen=True)
class PlacementSpec:
    name: str
    storage: str  # "<kind>-<layout>"
    sampler: str
    transfer: str
    summary: str = ""
    world_size: int = 1  # ranks it runs on: 1, one learner process (rank placements say 0: any, a process each)

    @property
    def multi_rank(self) -> bool:
        """True for a placement run as one process per rank (rlperf.replay.multirank)."""
        return self.world_size != 1

    def __post_init__(self):
        reason = invalid_reason(self.storage, self.sampler, self.transfer)
        if reason:
            raise UsageError(f"placement {self.name!r}: {reason}")

    @property
    def kind(self) -> str:
        return split_storage(self.storage)[0]

    @property
    def layout_name(self) -> str:
        return split_storage(self.storage)[1]

    @property
    def parts(self) -> Transfer:
        return TRANSFERS[self.transfer]

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.parts.metrics

    @property
    def needs_cuda(self) -> bool:
        return self.parts.needs_cuda

    @property
    def requires(self) -> tuple[str, ...]:
        return self.parts.requires + (("cupy",) if self.sampler == "fused" else ())

    @property
    def config(self) -> str:
        return f"storage={self.storage},sampler={self.sampler},transfer={self.transfer}"

    def stored_layout(self, dims: RowLayout) -> StorageLayout:
        return storage_layout(self.layout_name, dims)

    def memory_need(self, dims: RowLayout, capacity_rows: int, sample_rows: int) -> MemoryNeed:
        """Bytes the placement allocates with its own layout, checked before anything is allocated."""
        return self.parts.memory(self.stored_layout(dims), capacity_rows, sample_rows)

    def unavailable_reason(self) -> str | None:
        """Why it cannot run in this environment at all (a missing library), else None."""
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        return f"placement {self.name!r} needs {', '.join(missing)}; not installed" if missing else None

    def load(self):
        module, cls = self.parts.impl.split(":")
        return getattr(importlib.import_module(module), cls)


def _named(name, storage, sampler, transfer, summary) -> PlacementSpec:
    return PlacementSpec(name, storage, sampler, transfer, summary)


PLACEMENTS: dict[str, PlacementSpec] = {s.name: s for s in (
    _named("host", "host-fp32", "torch", "h2d", "host table, CPU gather (torch threads) -> pinned staging -> "
           "H2D on a copy stream"),
    _named("host-pageable", "host-fp32", "torch", "h2d-pageable", "host table, CPU gather -> pageable staging -> "
           "H2D (driver bounce buffers)"),
    _named("host-pipelined", "host-fp32", "torch", "pipelined", "host table, 8-chunk pipeline: CPU gather of "
           "chunk k+1 overlaps the H2D of chunk k (pinned)"),
    _named("uva", "host-pinned-fp32-padded", "torch", "uva", "pinned host table read directly by a GPU gather "
           "kernel (zero-copy, no CPU gather)"),
    _named("gpu", "device-fp32", "torch", "none", "GPU-resident ring (packed rows), device randint + "
           "index_select(out=)"),
    _named("gpu-padded", "device-fp32-padded", "torch", "none", "GPU-resident ring, rows padded to a 16-byte "
           "multiple (930 -> 932 floats)"),
    _named("gpu-fused", "device-fp32", "fused", "none", "GPU-resident ring (packed rows), one kernel: "
           "counter-based indices + 8-byte vector row copy"),
    _named("gpu-fused-padded", "device-fp32-padded", "fused", "none", "GPU-resident ring, rows padded to 932 "
           "floats, one kernel: counter-based indices + 16-byte vector row copy"),
    _named("gpu-cache", "host-pinned-fp32-padded", "torch", "cache", f"pinned host table + GPU cache of min(C, "
           f"{CACHE_ROWS_MAX:,}) rows, 1/{REFRESH_PERIOD} refreshed per iteration by DMA, overlapped with the "
           "cache gather"),
    _named("host-bf16", "host-bf16-slim", "torch", "h2d", "host table of bf16 rows (bf16 actions, one-byte "
           "flags), CPU gather -> pinned staging -> H2D"),
    _named("uva-bf16", "host-pinned-bf16-slim", "torch", "uva", "zero-copy UVA gather of bf16 rows (1,872 B "
           "for motion tracking)"),
    _named("gpu-bf16", "device-bf16-slim", "torch", "none", "GPU-resident ring of bf16 rows, randint + "
           "index_select"),
    _named("gpu-fused-bf16", "device-bf16-slim", "fused", "none", "GPU-resident ring of bf16 rows, one kernel: "
           "counter-based indices + 16-byte vector row copy"),
    _named("gpu-compact", "device-compact", "torch", "none", "GPU-resident ring, next_obs by index + terminal "
           "table, bf16 (about 1 KB a motion-tracking row)"),
    _named("gpu-compact-fused", "device-compact", "fused", "none", "GPU-resident compact ring, one kernel: "
           "counter-based indices, the row, its successor's obs or its terminal row, 16-byte vector loads"),
    _named("host-compact", "host-compact", "torch", "h2d", "host ring, next_obs by index + terminal table, "
           "bf16; CPU gather of both steps -> pinned staging -> H2D"),
    _named("torchrl-host", "host-fp32", "torch", "torchrl-pinned", "TorchRL ReplayBuffer, LazyTensorStorage on "
           "the host, RandomSampler, packed rows; batch pinned by the buffer, then H2D"),
    _named("torchrl-host-td", "host-fp32", "torch", "torchrl-td-pinned", "TorchRL ReplayBuffer, "
           "LazyTensorStorage on the host, RandomSampler, TensorDict fields; batch pinned by the buffer, then H2D"),
    _named("torchrl-device", "device-fp32", "torch", "torchrl", "TorchRL ReplayBuffer, "
           "LazyTensorStorage(device=cuda), RandomSampler, packed rows"),
    _named("torchrl-device-td", "device-fp32", "torch", "torchrl-td", "TorchRL ReplayBuffer, "
           "LazyTensorStorage(device=cuda), RandomSampler, TensorDict fields"),
    _named("reference-host", "host-fp32", "torch", "reference-h2d", "the reference benchmark's host path as a "
           "peer: plain pageable table, randint + index_select(out=) into pinned staging, non-blocking H2D"),
    _named("gpu-compact-a16-fused", "device-compact-a16", "fused", "none", "GPU-resident compact ring with every "
           "field on a 16-byte boundary (+16 B a stored row, +32 B a batch row): gpu-compact-fused's kernel with no "
           "vector straddling two fields and no misaligned load"),
    _named("host-numba", "host-fp32", "torch", "h2d-numba", "host table, CPU gather by the Numba row-gather "
           "kernel (host_gather \"plain\", Numba threads) -> pinned staging -> H2D on a copy stream"),
    _named("uva-fused", "host-pinned-fp32-padded", "fused", "uva", "pinned host table read directly by one GPU "
           "kernel that also draws the rows (counter-based indices, zero-copy, one launch a pass)"),
    _named("uva-fused-bf16", "host-pinned-bf16-slim", "fused", "uva", "zero-copy UVA gather of bf16 rows by one "
           "kernel that also draws them (counter-based indices, one launch a pass)"),
)}
SPECS = PLACEMENTS  # the historical name


def combination(*, storage: str, sampler: str = "torch", transfer: str | None = None) -> PlacementSpec:
    """The named placement for this combination if there is one, else an ad-hoc spec named by its config."""
    if transfer is None:
        kind = split_storage(storage)[0]
        transfer = "none" if kind == "device" else "h2d" if kind == "host" else "uva"
    reason = invalid_reason(storage, sampler, transfer)
    if reason:
        raise UsageError(f"invalid combination storage={storage},sampler={sampler},transfer={transfer}: {reason}")
    for spec in PLACEMENTS.values():
        if (spec.storage, spec.sampler, spec.transfer) == (storage, sampler, transfer):
            return spec
    config = f"storage={storage},sampler={sampler},transfer={transfer}"
    return PlacementSpec(config, storage, sampler, transfer, f"{TRANSFERS[transfer].summary} ({config})")


def parse_combination(text: str) -> PlacementSpec:
    """`storage=device-bf16,sampler=fused[,transfer=none]` -> its PlacementSpec (UsageError if invalid)."""
    keys = {"storage", "sampler", "transfer"}
    parts = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in keys:
            raise UsageError(f"combination {text!r}: expected key=value with keys {', '.join(sorted(keys))}, "
                             f"got {item!r}")
        parts[key.strip()] = value.strip()
    if "storage" not in parts:
        raise UsageError(f"combination {text!r} needs storage=<kind>-<layout>")
    return combination(**parts)


def lookup(name: str) -> PlacementSpec:
    """A placement by name, or by combination config (anything containing '=')."""
    if name in PLACEMENTS:
        return PLACEMENTS[name]
    if "=" in name:
        return parse_combination(name)
    raise choice_error("placement", name, PLACEMENTS)


def valid_combinations() -> list[PlacementSpec]:
    """Every valid storage x sampler x transfer (the registry never lists invalid ones)."""
    out = []
    for kind, layout, sampler, transfer in product(sorted(STORAGE_KINDS), LAYOUTS, SAMPLER_NAMES, TRANSFERS):
        if invalid_reason(f"{kind}-{layout}", sampler, transfer) is None:
            out.append(combination(storage=f"{kind}-{layout}", sampler=sampler, transfer=transfer))
    return out


__all__ = ["CACHE_ROWS_MAX", "INDEX_BYTES", "MemoryNeed", "PLACEMENTS", "PlacementSpec", "REFRESH_PERIOD",
           "SPECS", "TORCHRL_REQUIRES", "TRANSFERS", "combination", "invalid_reason", "lookup", "parse_combination",
           "valid_combinations"]
