"""Benchmark replay tables: every page written with a checkable pattern, built once per process.

A never-written host table maps every read to the shared zero page and reports impossible gather
speeds (docs/workloads.md A6). Here each row holds its own index (as int32 bits) in column 0 and a
non-constant float pattern elsewhere, so every page is real and every gather can be verified.
"""

from __future__ import annotations

import torch

_CACHE: dict[tuple, torch.Tensor] = {}


def _pattern_row(width: int, device) -> torch.Tensor:
    return torch.arange(width, dtype=torch.float32, device=device).mul_(0.001).add_(1.0)


def fill_pattern_(table: torch.Tensor, first_id: int = 0) -> torch.Tensor:
    """Write every page: the float ramp everywhere, then row ids from `first_id` into column 0."""
    rows, width = table.shape
    table.copy_(_pattern_row(width, table.device).expand(rows, width))
    table.view(torch.int32)[:, 0] = torch.arange(first_id, first_id + rows, dtype=torch.int32, device=table.device)
    return table


def filled_table(rows: int, width: int, *, device: str | torch.device = "cpu", pin_memory: bool = False,
                 keep: bool = True) -> torch.Tensor:
    """A `(rows, width)` float32 table with the pattern; cached per process for the latest key only."""
    key = (rows, width, str(device), pin_memory)
    if key in _CACHE:
        return _CACHE[key]
    release_tables()
    table = fill_pattern_(torch.empty((rows, width), dtype=torch.float32, device=device, pin_memory=pin_memory))
    if keep:
        _CACHE[key] = table
    return table


def release_tables() -> None:
    """Drop cached tables and hand their memory back, so the next capacity can be allocated.

    Pinned host memory needs its own call: torch's caching host allocator keeps freed pinned blocks,
    so without it a 62 GB pinned table outlives its case and the next big host allocation (or a
    shared-memory table for the rank processes) runs the host out of memory.
    """
    import gc

    _CACHE.clear()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        _empty_pinned_cache()


def _empty_pinned_cache() -> None:
    for owner, name in ((getattr(torch, "accelerator", None), "empty_host_cache"),
                        (torch._C, "_accelerator_emptyHostCache"), (torch._C, "_host_emptyCache")):
        fn = getattr(owner, name, None)
        if fn is not None:
            fn()
            return


def row_ids(rows: torch.Tensor) -> torch.Tensor:
    """The row index written into column 0 of each gathered row."""
    return rows.view(torch.int32)[:, 0].to(torch.int64)
