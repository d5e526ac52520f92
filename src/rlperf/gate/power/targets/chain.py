"""A chain of dependent sqrt per env inside a Numba kernel's env loop, folded into one output as
`x * (1.0 + spin * 0.0)`: exactly x, yet kept by LLVM because the kernels' fastmath leaves out nnan and
ninf (spin * 0.0 could be NaN). Seeded by the env index so the chain cannot be hoisted out of the loop.
Shared by the Numba targets (walk, motion-tracking, noise); each names its own anchors."""

from __future__ import annotations

from rlperf.errors import UsageError

MARK = "injected by rlperf gate-power"
NULL = "# null change by rlperf gate-power"


def lines(indent: int, steps: int, seed: str = "float(i)") -> str:
    pad = " " * indent
    return (f"{pad}spin = 1.0 + {seed}\n{pad}for _ in range({steps}):  # {MARK}\n"
            f"{pad}    spin = math.sqrt(spin + 1.0)\n")


def check(source: str, path: str, *anchors: str) -> None:
    """Each anchor found exactly once, else a clear error: the file moved on, update the target."""
    if any(source.count(a) != 1 for a in anchors):
        raise UsageError(f"{path}: the injection anchors are not found once each; update "
                         "rlperf/gate/power/targets/ for this file")


def inject(source: str, path: str, anchor: str, term: str, folded: str, steps: int, indent: int) -> str:
    """`steps` sqrt per env before `anchor`, and `term` replaced by `folded` (which uses `spin`)."""
    check(source, path, anchor, term)
    return source.replace(anchor, lines(indent, steps) + anchor).replace(term, folded)


def null_edit(source: str, path: str, anchor: str, indent: int) -> str:
    """One comment line before `anchor`: a commit that changes nothing measurable."""
    check(source, path, anchor)
    return source.replace(anchor, " " * indent + NULL + "\n" + anchor)


__all__ = ["MARK", "NULL", "check", "inject", "lines", "null_edit"]
