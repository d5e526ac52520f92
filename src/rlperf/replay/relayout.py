"""The same transitions in another layout: copy a storage's rows into a storage of another layout field by
field, and compare two layouts' batches field by field.

Why: two layouts of one workload (compact and compact-a16) put the same fields at different byte offsets, so
their batches cannot be compared byte for byte, and a table pattern-filled by position (`prefill_pattern`)
holds different field values in each. The kernel probe times the fused compact kernel over compact-a16 rows
against the default over compact rows for the same draw: it copies the default storage into the other one
(`copy_transitions`) and checks the two batches with `same_fields`. Consumers read a batch only by field
offsets (`storage.field_view`), so equal fields are an equal batch to them.
"""

from __future__ import annotations

import torch

from rlperf.replay.layouts import StorageLayout
from rlperf.replay.storage import Storage, field_view


def copy_transitions(src: Storage, dst: Storage) -> None:
    """Make `dst` hold `src`'s rows, terminal rows, slots and write pointer, in `dst`'s own layout: every field
    copied by offset, every padding byte zero. Both storages are of one workload, capacity and step."""
    same = (src.capacity_rows, src.step_rows, src.layout.elide_next, src.layout.dims)
    if same != (dst.capacity_rows, dst.step_rows, dst.layout.elide_next, dst.layout.dims):
        raise ValueError(f"storages differ in capacity, step rows, elision or workload: {src.layout.name!r} "
                         f"{same[:3]} vs {dst.layout.name!r} {(dst.capacity_rows, dst.step_rows, dst.layout.elide_next)}")
    dst.table.zero_()
    for name, f in src.stored.items():
        field_view(dst.table, dst.stored[name]).copy_(field_view(src.table, f))
    if src.layout.elide_next:
        if src.terminal.shape[0] != dst.terminal.shape[0]:
            raise ValueError(f"terminal tables differ: {src.terminal.shape[0]} vs {dst.terminal.shape[0]} slots")
        dst.terminal.zero_()
        for name, f in src.terminal_fields.items():
            field_view(dst.terminal, dst.terminal_fields[name]).copy_(field_view(src.terminal, f))
        dst.slot_of_row.copy_(src.slot_of_row)
        dst.row_of_slot.copy_(src.row_of_slot)
        dst.next_slot = src.next_slot
    dst.ptr, dst.size = src.ptr, src.size


def same_fields(a: torch.Tensor, a_layout: StorageLayout, b: torch.Tensor, b_layout: StorageLayout) -> bool:
    """Whether batch rows `a` (of `a_layout`) and `b` (of `b_layout`) hold the same bytes in every field, and
    `b`'s bytes outside its fields (its padding) are zero."""
    if a.shape[0] != b.shape[0]:
        return False
    fa = {f.name: f for f in a_layout.batch_fields()}
    fb = {f.name: f for f in b_layout.batch_fields()}
    if fa.keys() != fb.keys():
        return False
    u8a, u8b = a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)
    padding = torch.ones(u8b.shape[1], dtype=torch.bool, device=b.device)
    for name, f in fa.items():
        g = fb[name]
        if (f.dtype, f.width) != (g.dtype, g.width) or not torch.equal(u8a[:, f.offset: f.stop],
                                                                         u8b[:, g.offset: g.stop]):
            return False
        padding[g.offset: g.stop] = False
    return not bool(u8b[:, padding].any())


__all__ = ["copy_transitions", "same_fields"]
