"""Storage layouts: which fields a stored row holds, each field's dtype, byte offsets and padding.

A layout is pure arithmetic (no torch), so guards, charts and the CLI read bytes from it directly.
Two rows matter per layout:
- the *stored* row, what one table row holds (next_obs / next_critic dropped when `elide_next`);
- the *batch* row, what a learner batch carries per sampled transition (every field, same dtypes).
Elision saves storage, not bytes moved per batch.

Fields keep the reference order (obs, next_obs, actions, reward, done, truncated, critic,
next_critic); each starts at a multiple of its element size, and a row is a whole number of
4-byte words (tables are stored as float32 words, so every gather moves the same bytes as fp32).
A layout with `field_align` (compact-a16) also starts each of `ALIGNED_FIELDS` at a multiple of it, in
every row that holds it: consumers read a batch by field offsets (`storage.field_view`), never by
packed cumulative widths, so the padding between fields is invisible to them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from rlperf.errors import choice_error
from rlperf.row_layout import FIELD_ORDER, RowLayout

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "uint8": 1}
WORD_BYTES = 4
NEXT_FIELDS = ("next_obs", "next_critic")
VECTOR_OF = {"obs": "obs", "next_obs": "obs", "critic": "critic", "next_critic": "critic"}
MIB = 2**20
TERMINAL_FRACTION = 32  # elided layouts: terminal-table slots = capacity // 32 (live terminal rows at once)
SLOT_INDEX_BYTES = 4  # int32 terminal slot per stored row
# Fields a `field_align` layout starts on that boundary: those elision reads from another row (obs, critic
# and their next_ forms) and actions, which follows next_obs in a batch row. In an elided batch row every
# source run (the sampled row, the successor or terminal row) then starts on a 16-byte boundary and sits
# at a 16-byte multiple from its source, and each run's tail padding maps onto padding of its source row:
# no output vector straddles two runs, none needs a shift (replay.compact_plan, docs/replay-compact-kernel.md).
ALIGNED_FIELDS = ("obs", "next_obs", "actions", "critic", "next_critic")


@dataclass(frozen=True)
class Field:
    name: str
    width: int  # elements
    dtype: str
    offset: int  # bytes from the row start

    @property
    def nbytes(self) -> int:
        return self.width * DTYPE_BYTES[self.dtype]

    @property
    def stop(self) -> int:
        return self.offset + self.nbytes


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class StorageLayout:
    """Row format of one storage: dtype per field kind, next-obs elision and row alignment.

    `vectors` is the dtype of obs and critic obs (and their next_ forms), `actions` of the actions,
    `flags` of done and truncated; reward is always float32 (bf16 would round it to 8 bits).
    """

    name: str
    dims: RowLayout
    vectors: str = "float32"
    actions: str = "float32"
    flags: str = "float32"
    elide_next: bool = False
    align_bytes: int = 0  # pad both rows to a multiple of this (16: vector loads); 0 = whole words only
    field_align: int = 0  # start each of ALIGNED_FIELDS at a multiple of this in every row; 0 = packed

    def __post_init__(self):
        for kind in ("vectors", "actions", "flags"):
            if getattr(self, kind) not in DTYPE_BYTES:
                raise choice_error(f"{kind} dtype", getattr(self, kind), DTYPE_BYTES)
        if self.align_bytes % WORD_BYTES:
            raise ValueError(f"align_bytes must be a multiple of {WORD_BYTES}, got {self.align_bytes}")
        if self.field_align and (self.field_align % WORD_BYTES or not self.align_bytes
                                 or self.align_bytes % self.field_align):
            raise ValueError(f"field_align must be a multiple of {WORD_BYTES} that divides align_bytes "
                             f"({self.align_bytes}, rows end on a field boundary), got {self.field_align}")

    def dtype_of(self, name: str) -> str:
        if name in VECTOR_OF:
            return self.vectors
        if name == "actions":
            return self.actions
        if name in ("done", "truncated"):
            return self.flags
        return "float32"

    def _fields(self, names) -> tuple[Field, ...]:
        widths = self.dims.widths()
        out, offset = [], 0
        for name in names:
            if widths[name] == 0:
                continue
            dtype = self.dtype_of(name)
            offset = _round_up(offset, DTYPE_BYTES[dtype])
            if self.field_align and name in ALIGNED_FIELDS:
                offset = _round_up(offset, self.field_align)
            out.append(Field(name, widths[name], dtype, offset))
            offset = out[-1].stop
        return tuple(out)

    def batch_fields(self) -> tuple[Field, ...]:
        """Every field, as a learner batch carries it."""
        return self._fields(FIELD_ORDER)

    def stored_fields(self) -> tuple[Field, ...]:
        return self._fields(n for n in FIELD_ORDER if not (self.elide_next and n in NEXT_FIELDS))

    def terminal_fields(self) -> tuple[Field, ...]:
        """A terminal-table row: the final obs (and critic obs) of a row whose episode ended."""
        return self._fields(NEXT_FIELDS) if self.elide_next else ()

    def _row_bytes(self, fields) -> int:
        used = fields[-1].stop if fields else 0
        return _round_up(used, max(self.align_bytes, WORD_BYTES))

    # RowLayout-compatible names (placements size buffers in float32 words). Cached: placements read them on every
    # pass (launch arguments, batch views), and each read laid out every field again; on the zero-copy pass that
    # took as long as CuPy's launch (issue 23, docs/replay-zero-copy.md).
    @functools.cached_property
    def stored_row_bytes(self) -> int:
        return self._row_bytes(self.stored_fields())

    @functools.cached_property
    def batch_row_bytes(self) -> int:
        return self._row_bytes(self.batch_fields())

    @functools.cached_property
    def terminal_row_bytes(self) -> int:
        return self._row_bytes(self.terminal_fields()) if self.elide_next else 0

    @functools.cached_property
    def stored_width(self) -> int:
        return self.stored_row_bytes // WORD_BYTES

    @functools.cached_property
    def batch_width(self) -> int:
        return self.batch_row_bytes // WORD_BYTES

    @functools.cached_property
    def width(self) -> int:
        """Words of a batch row a consumer sees (padding words excluded)."""
        return _round_up(self.batch_fields()[-1].stop, WORD_BYTES) // WORD_BYTES

    @functools.cached_property
    def row_bytes(self) -> int:
        return self.width * WORD_BYTES

    def terminal_rows(self, capacity_rows: int) -> int:
        return max(1, capacity_rows // TERMINAL_FRACTION) if self.elide_next else 0

    def table_bytes(self, capacity_rows: int) -> int:
        """Everything a storage of `capacity_rows` allocates: rows, terminal table, slot index."""
        extra = 0
        if self.elide_next:
            slots = self.terminal_rows(capacity_rows)
            extra = slots * (self.terminal_row_bytes + 8) + capacity_rows * SLOT_INDEX_BYTES
        return capacity_rows * self.stored_row_bytes + extra

    def summary(self, sample_rows: int) -> dict:
        """Bytes per row and per learner iteration (JSON-ready)."""
        batch = sample_rows * self.batch_row_bytes
        return {"layout": self.name, "vectors": self.vectors, "actions": self.actions, "flags": self.flags,
                "elide_next": self.elide_next, "align_bytes": self.align_bytes, "field_align": self.field_align,
                "stored_row_bytes": self.stored_row_bytes, "batch_row_bytes": self.batch_row_bytes,
                "terminal_row_bytes": self.terminal_row_bytes, "sample_rows": sample_rows,
                "batch_bytes_per_iteration": batch, "batch_mib_per_iteration": batch / MIB}


# name -> (vectors, actions, flags, elide_next, align_bytes, field_align)
LAYOUTS: dict[str, tuple[str, str, str, bool, int, int]] = {
    "fp32": ("float32", "float32", "float32", False, 0, 0),  # the reference's packed row
    "fp32-padded": ("float32", "float32", "float32", False, 16, 0),
    "fp32-elided": ("float32", "float32", "float32", True, 16, 0),
    "bf16": ("bfloat16", "float32", "float32", False, 16, 0),
    "bf16-flags": ("bfloat16", "float32", "uint8", False, 16, 0),
    "bf16-actions": ("bfloat16", "bfloat16", "float32", False, 16, 0),
    "bf16-slim": ("bfloat16", "bfloat16", "uint8", False, 16, 0),
    "compact": ("bfloat16", "bfloat16", "uint8", True, 16, 0),  # elided + bf16-slim: the 2^26-row table
    # compact with its vector fields and actions on 16-byte boundaries: no batch vector straddles two source
    # runs (a probe layout for the fused compact kernel, issue 23 §2; not any placement's default)
    "compact-a16": ("bfloat16", "bfloat16", "uint8", True, 16, 16),
}


def storage_layout(name: str, dims: RowLayout) -> StorageLayout:
    """The registered layout `name` for rows of `dims`."""
    if name not in LAYOUTS:
        raise choice_error("layout", name, LAYOUTS)
    vectors, actions, flags, elide, align, field_align = LAYOUTS[name]
    return StorageLayout(name, dims, vectors, actions, flags, elide, align, field_align)


def layout_table(dims: RowLayout, sample_rows: int) -> list[dict]:
    """Every registered layout's bytes for this workload: the source of the per-iteration targets."""
    return [storage_layout(name, dims).summary(sample_rows) for name in LAYOUTS]


__all__ = ["ALIGNED_FIELDS", "DTYPE_BYTES", "Field", "LAYOUTS", "StorageLayout", "TERMINAL_FRACTION", "layout_table",
           "storage_layout"]
