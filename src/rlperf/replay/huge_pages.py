"""Transparent huge pages for pageable host tables: fewer TLB misses in a random row gather.

A CPU gather of 32,768 random 3,720 B rows from a 3.6 GiB table touches one or two 4 KiB pages per
row, and almost every one misses the TLB (the table spans ~950 K small pages; the second-level TLB
holds a few thousand). Under THP's usual `madvise` mode a torch allocation gets small pages unless it
asks; `advise_huge_pages` asks (`madvise(MADV_HUGEPAGE)`) before the first write, so the faults that
write the table map 2 MiB pages and one TLB entry covers ~560 rows. Pinned memory (cudaHostAlloc) is
the driver's and is left alone. Linux only; elsewhere, or with THP `never`, nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from pathlib import Path

MADV_HUGEPAGE = 14  # <asm-generic/mman-common.h>
MADV_NOHUGEPAGE = 15
PAGE = 4096
HUGE_PAGE = 2 * 2**20
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def thp_mode() -> str:
    """The kernel's THP mode (`always`, `madvise` or `never`), or `unavailable`."""
    try:
        text = THP_MODE.read_text()
    except OSError:
        return "unavailable"
    return next((w.strip("[]") for w in text.split() if w.startswith("[")), "unavailable")


@functools.lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def advise_huge_pages(address: int, nbytes: int, *, huge: bool = True) -> bool:
    """Ask for huge pages on the whole pages of [address, address + nbytes); True if the kernel took the
    advice. Call it before the memory is first written: pages already faulted stay small until khugepaged.
    `huge=False` asks for small pages instead (MADV_NOHUGEPAGE): how a probe forces the other state."""
    if not sys.platform.startswith("linux") or nbytes < HUGE_PAGE or thp_mode() not in ("always", "madvise"):
        return False
    start = -(-address // PAGE) * PAGE
    stop = (address + nbytes) // PAGE * PAGE
    libc = _libc()
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    advice = MADV_HUGEPAGE if huge else MADV_NOHUGEPAGE
    return libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(stop - start), advice) == 0


def _smaps_text() -> str:
    try:
        return Path("/proc/self/smaps").read_text()
    except OSError:
        return ""


def mapping_flags(address: int) -> dict[str, int]:
    """`THPeligible` and `AnonHugePages` (bytes) of the mapping that holds `address`, from /proc/self/smaps
    (empty where there is none): evidence that a table got huge pages."""
    out, inside = {}, False
    for line in _smaps_text().splitlines():
        head = line.split()[0] if line else ""
        if "-" in head and ":" not in head:  # a mapping's first line: "lo-hi perms offset dev inode path"
            if inside:
                break
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "THPeligible:":
            out["THPeligible"] = int(line.split()[1])
        elif inside and head == "AnonHugePages:":
            out["AnonHugePages"] = int(line.split()[1]) * 1024
    return out


def range_backing(address: int, nbytes: int, smaps: str | None = None) -> dict:
    """How the memory of [address, address + nbytes) is backed, summed over the mappings that overlap it:
    their bytes, resident bytes, bytes in transparent huge pages (`AnonHugePages`), the bytes of those that
    may take huge pages (`THPeligible`: advised, or THP `always`) and `huge_share` = huge / resident bytes.
    Why: a random row gather misses the TLB far less on 2 MiB pages, and whether a table got them is
    decided when its pages fault, in each process.

    A mapping wider than the range (a small tensor inside the heap) reports the whole mapping: compare
    `mapped_bytes` with `nbytes`. `smaps`: the text of /proc/<pid>/smaps (default: this process's)."""
    text = _smaps_text() if smaps is None else smaps
    out = {"address": address, "nbytes": nbytes, "offset_in_huge_page": address % HUGE_PAGE, "mappings": 0,
           "mapped_bytes": 0, "rss_bytes": 0, "anon_huge_bytes": 0, "eligible_bytes": 0, "huge_share": None}
    inside, size = False, 0
    for line in text.splitlines():
        head = line.split()[0] if line else ""
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo < address + nbytes and address < hi
            size = hi - lo
            if inside:
                out["mappings"] += 1
                out["mapped_bytes"] += size
        elif inside and head == "Rss:":
            out["rss_bytes"] += int(line.split()[1]) * 1024
        elif inside and head == "AnonHugePages:":
            out["anon_huge_bytes"] += int(line.split()[1]) * 1024
        elif inside and head == "THPeligible:" and int(line.split()[1]):
            out["eligible_bytes"] += size
    if out["rss_bytes"]:
        out["huge_share"] = out["anon_huge_bytes"] / out["rss_bytes"]
    return out


def tensor_backing(t) -> dict:
    """`range_backing` of a CPU tensor's bytes (its data pointer and nbytes)."""
    return range_backing(t.data_ptr(), t.numel() * t.element_size())


def host_table_backing(owner) -> dict | None:
    """`tensor_backing` of `owner.table` (a placement's) when it lives in host memory; None for a device table or
    none. A host table gets its 2 MiB pages, or not, when its pages fault in its process, so a record of a host
    gather's time keeps the backing its table had beside it."""
    table = getattr(owner, "table", None)
    if table is None or table.device.type != "cpu":
        return None
    return tensor_backing(table)


__all__ = ["HUGE_PAGE", "advise_huge_pages", "host_table_backing", "mapping_flags", "range_backing", "tensor_backing",
           "thp_mode"]
