"""Where each byte of an elided (compact) batch row comes from: the plan the fused compact kernel follows.

A batch row of an elided layout is assembled from three rows: the sampled stored row (obs, actions,
reward, flags, critic), and for next_obs / next_critic either the successor row (index + N) or, for a
row whose step ended an episode, its terminal-table row. Fields shift by different amounts and some
are only 2-byte aligned, so the kernel follows a plan per 16-byte output vector:

- `SEGMENT` kinds: `ROW` (the stored row), `NEXT` (successor row, or terminal row when the row ended;
  two source offsets), `ZERO` (padding at the row's end), `MIXED` (the vector straddles a segment
  boundary: the kernel assembles it byte by byte from the byte plan); `MERGE` (the same vector joined
  from whole 16-byte loads with byte masks: the `merge` plan of `replay.compact_merge`, which
  gpu-compact-fused launches; `compact_plan` itself is the `bytes` plan).
- Consecutive fields with the same source and the same shift form one segment, and the padding
  between them is copied with them (its bytes are not part of any field; a batch's fields are its
  contract); padding after the last field is written as zeros.
- A `field_align` layout (compact-a16) starts every segment on a 16-byte boundary, and each segment
  runs on over the padding after it, up to the next segment or the row's end: those bytes are padding
  of its source rows too (`_run_on` checks it), zero in rows written by `Storage.add`. So every
  vector has one source at one shift, a multiple of 16: no MIXED or MERGE vector, no misaligned load.
  The plain compact layout keeps its plan (zeros after a segment), the one measured on the H200.

`gather_bytes` applies the byte plan with numpy: the kernel's host oracle, tested against
`Storage.gather`. `bytes_requested` counts the loads and stores the kernel issues per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlperf.replay.layouts import StorageLayout

ROW, NEXT, ZERO, MIXED, MERGE = 0, 1, 2, 3, 4
VEC = 16
INDEX_BYTES, SLOT_BYTES = 8, 4  # the kernel writes each drawn row index and reads each row's terminal slot


@dataclass(frozen=True)
class CompactPlan:
    """`vectors` (batch_row_bytes // 16, 4) int32: kind, source offset (row or successor), terminal
    offset, 0; a MIXED vector holds its ordinal m among the mixed ones instead of an offset.
    `bytes_` (batch_row_bytes, 4) int32: the same per byte (kind never MIXED); `mixed_bytes`
    (16 per mixed vector, 4): the byte plans of the mixed vectors, in order (the kernel's copy; a merge
    plan appends its MERGE entries, `compact_merge`)."""

    vectors: np.ndarray
    bytes_: np.ndarray
    mixed_bytes: np.ndarray
    stored_row_bytes: int
    terminal_row_bytes: int

    @property
    def mixed(self) -> int:
        return int((self.vectors[:, 0] == MIXED).sum())

    @property
    def table_blocks(self) -> int:
        """The kernel's shared table in blocks of 16 int4 (the default plan: one per mixed vector)."""
        return len(self.mixed_bytes) // VEC


def byte_plan(layout: StorageLayout) -> np.ndarray:
    """(batch_row_bytes, 4) int32: kind, source offset, terminal offset, 0 for every byte of a batch row."""
    if not layout.elide_next:
        raise ValueError(f"layout {layout.name!r} stores whole rows; the compact plan is for elided layouts")
    stored = {f.name: f for f in layout.stored_fields()}
    terminal = {f.name: f for f in layout.terminal_fields()}
    plan = np.zeros((layout.batch_row_bytes, 4), dtype=np.int32)
    plan[:, 0] = ZERO
    segments = []  # [kind, dest lo, dest hi, shift to source, shift to terminal]
    for f in layout.batch_fields():
        if f.name in stored:
            seg = [ROW, f.offset, f.stop, stored[f.name].offset - f.offset, 0]
        else:
            seg = [NEXT, f.offset, f.stop, stored[f.name.removeprefix("next_")].offset - f.offset,
                   terminal[f.name].offset - f.offset]
        last = segments[-1] if segments else None
        if last and (last[0], last[3], last[4]) == (seg[0], seg[3], seg[4]):
            last[2] = seg[2]  # same source, same shift: one segment, the padding between copied along
        else:
            segments.append(seg)
    if layout.field_align:
        _run_on(layout, segments, stored, terminal)
    for kind, lo, hi, shift, tshift in segments:
        dest = np.arange(lo, hi)
        plan[lo:hi, 0] = kind
        plan[lo:hi, 1] = dest + shift
        plan[lo:hi, 2] = dest + tshift if kind == NEXT else 0
    return plan


def _run_on(layout: StorageLayout, segments: list, stored: dict, terminal: dict) -> None:
    """Extend each segment over the padding up to the next one (or the row's end), in place, after checking
    that those bytes are padding inside each source row (the stored row; for NEXT, the terminal row too)."""
    def padding(fields, row_bytes: int, lo: int, hi: int) -> bool:
        return 0 <= lo and hi <= row_bytes and not any(f.offset < hi and lo < f.stop for f in fields)

    for j, seg in enumerate(segments):
        kind, hi, shift, tshift = seg[0], seg[2], seg[3], seg[4]
        end = segments[j + 1][1] if j + 1 < len(segments) else layout.batch_row_bytes
        ok = padding(stored.values(), layout.stored_row_bytes, hi + shift, end + shift)
        if kind == NEXT:
            ok = ok and padding(terminal.values(), layout.terminal_row_bytes, hi + tshift, end + tshift)
        if not ok:
            raise ValueError(f"layout {layout.name!r}: batch bytes {hi}..{end} after a segment are not padding of "
                             "its source row; field_align cannot run the segment on")
        seg[2] = end


def compact_plan(layout: StorageLayout) -> CompactPlan:
    """The vector plan (uniform vectors read 16 contiguous source bytes) over the byte plan."""
    per_byte = byte_plan(layout)
    vecs = per_byte.reshape(-1, VEC, 4)
    out = np.zeros((vecs.shape[0], 4), dtype=np.int32)
    steps = np.arange(VEC)
    mixed = []
    for v, b in enumerate(vecs):
        kind = b[0, 0]
        uniform = (b[:, 0] == kind).all() and (kind == ZERO or (
            (b[:, 1] == b[0, 1] + steps).all() and (kind != NEXT or (b[:, 2] == b[0, 2] + steps).all())))
        out[v] = (kind, b[0, 1], b[0, 2], 0) if uniform else (MIXED, len(mixed), 0, 0)
        if not uniform:
            mixed.append(b)
    mixed_bytes = np.concatenate(mixed) if mixed else np.zeros((0, 4), dtype=np.int32)
    return CompactPlan(out, per_byte, mixed_bytes, layout.stored_row_bytes, layout.terminal_row_bytes)


def gather_bytes(table: np.ndarray, terminal: np.ndarray, slot_of_row: np.ndarray, rows: np.ndarray,
                 *, step_rows: int, plan: CompactPlan) -> np.ndarray:
    """The kernel's result on the host: uint8 batch rows for `rows`, from uint8 table and terminal rows."""
    kind, off, toff = plan.bytes_[:, 0], plan.bytes_[:, 1], plan.bytes_[:, 2]
    out = np.zeros((rows.size, plan.bytes_.shape[0]), dtype=np.uint8)
    succ = (rows + step_rows) % table.shape[0]
    for i, (r, s) in enumerate(zip(rows, succ)):
        slot = slot_of_row[r]
        src = table[r]
        out[i, kind == ROW] = src[off[kind == ROW]]
        nxt = kind == NEXT
        out[i, nxt] = terminal[slot][toff[nxt]] if slot >= 0 else table[s][off[nxt]]
    return out


def _loaded(offset: int) -> range:
    """Source bytes the kernel's load of 16 bytes at `offset` covers: one aligned 16-byte vector, or the
    two aligned vectors around a misaligned run (load16)."""
    lo = offset // VEC * VEC
    return range(lo, lo + (VEC if offset % VEC == 0 else 2 * VEC))


def bytes_requested(plan: CompactPlan) -> dict[str, int]:
    """Distinct bytes one sampled row's kernel work reads and writes, for a row with a successor (the
    common case; a terminal row reads its terminal row instead: the same fields at other offsets).
    Read: the sampled row's and the successor's bytes its loads cover, and the terminal slot; written:
    the whole batch row and the drawn index. The floor is the batch row read once and written once."""
    touched = {ROW: np.zeros(plan.stored_row_bytes, bool), NEXT: np.zeros(plan.stored_row_bytes, bool)}
    for v, (kind, off, _toff, _) in enumerate(plan.vectors):
        if kind in (ROW, NEXT):
            touched[kind][_loaded(int(off))] = True
        elif kind == MERGE:  # each run's 16-byte window, as load16 reads it
            for run_kind, run_off, _t, _ in plan.mixed_bytes[off: off + 2]:
                if run_kind in (ROW, NEXT):
                    touched[run_kind][_loaded(int(run_off))] = True
        elif kind == MIXED:
            for kind_b, off_b, _t, _ in plan.bytes_[v * VEC: (v + 1) * VEC]:
                if kind_b in (ROW, NEXT):
                    touched[kind_b][off_b] = True
    read = int(touched[ROW].sum() + touched[NEXT].sum()) + SLOT_BYTES
    return {"read": read, "written": plan.bytes_.shape[0] + INDEX_BYTES}


__all__ = ["CompactPlan", "MERGE", "MIXED", "NEXT", "ROW", "ZERO", "byte_plan", "bytes_requested", "compact_plan",
           "gather_bytes"]
