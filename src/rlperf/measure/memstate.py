"""The memory state a timing ran in: page faults, the kernel's free huge-page-sized blocks, the allocator.

A memory-bound timing can differ between processes running the same code because of what the process's
memory is made of, not what the code does: pages faulted inside the timed call (a fresh 32 MB buffer is
~7,800 minor faults), whether the kernel could hand out 2 MiB pages (free blocks of order >= 9), what
glibc's allocator kept. These read those facts cheaply, so a probe can record them per process. Linux
and glibc only; elsewhere each returns None or an empty dict.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
from pathlib import Path

HUGE_ORDER = 9  # 2^9 4 KiB pages: one 2 MiB transparent huge page
BUDDYINFO = Path("/proc/buddyinfo")
CPUINFO = Path("/proc/cpuinfo")


def minor_faults() -> int:
    """Minor page faults of this process so far (a fault that maps a page without I/O, e.g. a first write)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def free_blocks(min_order: int = HUGE_ORDER, text: str | None = None) -> int | None:
    """Free blocks of at least `min_order` pages, in units of 2^min_order pages (an order-10 block counts
    two order-9 ones), over every zone of /proc/buddyinfo: how many huge pages the kernel could hand out
    without compacting. None where the file is unreadable."""
    if text is None:
        try:
            text = BUDDYINFO.read_text()
        except OSError:
            return None
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if "zone" not in parts:
            continue
        counts = [int(x) for x in parts[parts.index("zone") + 2:]]
        total += sum(n << (order - min_order) for order, n in enumerate(counts) if order >= min_order)
    return total


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def malloc_info() -> dict[str, int]:
    """glibc's mallinfo2: `arena` (heap bytes from brk), `hblks`/`hblkhd` (chunks and bytes in their own
    mmap), `fordblks` (free bytes kept in the heap), `keepcost` (free bytes at the heap's top). Empty
    where the C library has no mallinfo2 (musl, macOS, glibc < 2.33)."""
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _MallInfo2
    info = fn()
    return {name: int(getattr(info, name)) for name in ("arena", "hblks", "hblkhd", "uordblks", "fordblks",
                                                         "keepcost")}


def cpu_mhz(cpu: int, text: str | None = None) -> float | None:
    """The `cpu MHz` that /proc/cpuinfo reports for logical CPU `cpu` (a VM may report a constant)."""
    if text is None:
        try:
            text = CPUINFO.read_text()
        except OSError:
            return None
    current = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "processor":
            current = int(value)
        elif key == "cpu MHz" and current == cpu:
            return float(value)
    return None


__all__ = ["HUGE_ORDER", "cpu_mhz", "free_blocks", "malloc_info", "minor_faults"]
