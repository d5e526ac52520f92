"""Every Markdown table rlperf writes, through one call to `tabulate` (pipe format), so reports, the
summary, `rlperf plan` and `rlperf traffic` share one style: padded columns that read as text, and the
alignment (`---:`) that a Markdown viewer honours.

Cells are printed as given: callers format their numbers (`f"{v:.3f}"`) and tabulate never reparses
them (no "0.100" turning into "0.1"). None prints as "-", and a "|" inside a cell is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tabulate import tabulate

_ALIGN = {"l": "left", "r": "right", "c": "center"}


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]], align: str | None = None) -> list[str]:
    """The table's lines. `align`: one letter per column, `l`, `r` or `c` (left, right, centre); None
    leaves every column left-aligned."""
    headers = [_cell(h) for h in headers]
    rows = [[None if c is None else _cell(c) for c in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"row {i} has {len(row)} cells for {len(headers)} columns: {row}")
    colalign = None
    if align is not None:
        if len(align) != len(headers) or set(align) - set(_ALIGN):
            raise ValueError(f"align {align!r}: give one of l, r, c for each of the {len(headers)} columns")
        colalign = [_ALIGN[a] for a in align]
    return tabulate(rows, headers=headers, tablefmt="pipe", disable_numparse=True, missingval="-",
                    colalign=colalign).splitlines()


def _cell(value: object) -> str:
    return str(value).replace("|", r"\|")


__all__ = ["markdown_table"]
