"""The straddling vectors of a compact batch row without the byte-by-byte path: the `merge` plan, the one
gpu-compact-fused launches (`placements.gpu.COMPACT_MIXED`, kernel `sample_compact_merge`).

A MIXED vector (`compact_plan`) straddles a segment boundary, so the `bytes` plan's kernel (`sample_compact`)
builds it byte by byte: on the H200 29 % of that kernel's time for a motion-tracking row, and the merge plan
took the kernel from 0.0574 to 0.0522 ms with the same batch (docs/replay-compact-kernel.md). Each of its bytes still comes from
one of at most a few runs, each a contiguous source run at one shift. The merge plan reads each run as the
16 source bytes that line up with the output vector (`load16`: aligned int4 loads and a funnel shift) and
joins the runs with one byte mask per 32-bit word: `(A & maskA) | (B & maskB)`, zeros where neither.

A vector becomes MERGE when it has at most two non-zero runs and both runs' 16-byte windows (and the
terminal row's, for NEXT) lie inside their rows with the reach of `load16`; any other stays MIXED. Its
entry, four int4 after the byte plans in the kernel's shared table: {kind, offset, terminal offset, 0} of
run A and of run B (kind ZERO when there is no B), then mask A's and mask B's four words.

`gather_vectors` applies a vector plan the kernel's way, vector by vector: the host oracle of both plans.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlperf.errors import choice_error
from rlperf.replay.compact_plan import MERGE, MIXED, NEXT, ROW, VEC, ZERO, CompactPlan, compact_plan
from rlperf.replay.layouts import StorageLayout

MIXED_CHOICES = ("bytes", "merge")  # how the kernel builds a vector across a segment boundary (byte by byte, or not)
ENTRY = 4  # int4s per MERGE entry


def plan_for(layout: StorageLayout, mixed: str) -> CompactPlan:
    """The compact kernel's plan with its straddling vectors built `mixed` ("bytes": `compact_plan` itself,
    "merge": `merge_plan` of it). No default: callers name the plan, the placement through COMPACT_MIXED."""
    if mixed not in MIXED_CHOICES:
        raise choice_error("mixed-vector path", mixed, MIXED_CHOICES)
    plan = compact_plan(layout)
    return plan if mixed == "bytes" else merge_plan(plan)


def reach(offset: int, row_bytes: int) -> bool:
    """Whether `load16` at `offset` stays inside a row of `row_bytes` (a 16-byte multiple): one aligned int4,
    or the two around a misaligned run."""
    lo = offset // VEC * VEC
    return offset >= 0 and lo + (VEC if offset % VEC == 0 else 2 * VEC) <= row_bytes


def _runs(b: np.ndarray) -> list[tuple[int, int, int, np.ndarray]]:
    """The non-zero runs of a vector's byte plan: (kind, window offset, terminal window offset, byte mask);
    bytes of one kind at one shift form one run, wherever they sit in the vector."""
    runs: dict[tuple[int, int, int], np.ndarray] = {}
    for k in range(VEC):
        kind = int(b[k, 0])
        if kind == ZERO:
            continue
        key = (kind, int(b[k, 1]) - k, int(b[k, 2]) - k if kind == NEXT else 0)
        runs.setdefault(key, np.zeros(VEC, bool))[k] = True
    return [(kind, off, toff, mask) for (kind, off, toff), mask in runs.items()]


def _words(mask: np.ndarray) -> np.ndarray:
    """A byte mask as four little-endian 32-bit words (0xff per selected byte), stored as int32."""
    return np.where(mask, 0xFF, 0).astype(np.uint8).view("<u4").astype(np.uint32).view(np.int32)


def merge_entry(b: np.ndarray, plan: CompactPlan) -> np.ndarray | None:
    """The (4, 4) int32 MERGE entry for a mixed vector's byte plan `b`, or None if it cannot merge."""
    runs = _runs(b)
    if not 1 <= len(runs) <= 2:
        return None
    for kind, off, toff, _ in runs:
        if not reach(off, plan.stored_row_bytes) or (kind == NEXT and not reach(toff, plan.terminal_row_bytes)):
            return None
    entry = np.zeros((ENTRY, 4), dtype=np.int32)
    entry[1, 0] = ZERO
    for j, (kind, off, toff, mask) in enumerate(runs):
        entry[j, :3] = (kind, off, toff)
        entry[2 + j] = _words(mask)
    return entry


def merge_plan(plan: CompactPlan) -> CompactPlan:
    """`plan` with every mergeable MIXED vector a MERGE one; the shared table holds the byte plans of the
    vectors left MIXED, then the MERGE entries (vector: kind MERGE, int4 index of its entry), padded with
    zeros to whole 16-int4 blocks (the kernel copies `table_blocks` blocks into shared memory)."""
    vectors = plan.vectors.copy()
    mixed, entries, merged = [], [], []
    for v in np.flatnonzero(plan.vectors[:, 0] == MIXED):
        b = plan.bytes_[v * VEC: (v + 1) * VEC]
        entry = merge_entry(b, plan)
        if entry is None:
            vectors[v] = (MIXED, len(mixed), 0, 0)
            mixed.append(b)
        else:
            merged.append(v)
            entries.append(entry)
    for j, v in enumerate(merged):  # entries follow the byte plans of the vectors left MIXED
        vectors[v] = (MERGE, VEC * len(mixed) + ENTRY * j, 0, 0)
    table = np.concatenate(mixed + entries) if mixed or entries else np.zeros((0, 4), dtype=np.int32)
    table = np.concatenate([table, np.zeros((-len(table) % VEC, 4), dtype=np.int32)])
    return dataclasses.replace(plan, vectors=vectors, mixed_bytes=table)


def _load(row: np.ndarray, offset: int) -> np.ndarray:
    """`load16` on the host: the 16 bytes at `offset`, refused where the kernel's loads would leave the row."""
    if not reach(offset, row.size):
        raise IndexError(f"a 16-byte load at {offset} leaves a {row.size} B row")
    return row[offset: offset + VEC]


def _vector(p: np.ndarray, plan: CompactPlan, src: np.ndarray, nxt: np.ndarray, ended: bool) -> np.ndarray:
    kind, off, toff = int(p[0]), int(p[1]), int(p[2])
    if kind == ROW:
        return _load(src, off)
    if kind == NEXT:
        return _load(nxt, toff if ended else off)
    if kind == MIXED:
        out = np.zeros(VEC, np.uint8)
        for k, (kb, ob, tb, _) in enumerate(plan.mixed_bytes[VEC * off: VEC * off + VEC]):
            if kb == ROW:
                out[k] = src[ob]
            elif kb == NEXT:
                out[k] = nxt[tb if ended else ob]
        return out
    if kind == MERGE:
        a, b, ma, mb = plan.mixed_bytes[off: off + ENTRY]
        words = np.zeros(4, np.uint32)
        for run, mask in ((a, ma), (b, mb)):
            if run[0] != ZERO:
                words |= _vector(run, plan, src, nxt, ended).view("<u4") & mask.view(np.uint32)
        return words.astype("<u4").view(np.uint8)
    return np.zeros(VEC, np.uint8)


def gather_vectors(table: np.ndarray, terminal: np.ndarray, slot_of_row: np.ndarray, rows: np.ndarray,
                   *, step_rows: int, plan: CompactPlan) -> np.ndarray:
    """The kernel's result on the host, vector by vector as it builds them: uint8 batch rows for `rows`."""
    vecs = plan.vectors.shape[0]
    out = np.zeros((rows.size, vecs * VEC), dtype=np.uint8)
    for i, r in enumerate(rows):
        slot = int(slot_of_row[r])
        ended = slot >= 0
        nxt = terminal[slot] if ended else table[(r + step_rows) % table.shape[0]]
        for v in range(vecs):
            out[i, v * VEC: (v + 1) * VEC] = _vector(plan.vectors[v], plan, table[r], nxt, ended)
    return out


__all__ = ["MIXED_CHOICES", "gather_vectors", "merge_entry", "merge_plan", "plan_for", "reach"]
