"""Memory-state readers: free huge-page blocks from buddyinfo, the CPU's MHz, page faults that a write makes."""

from __future__ import annotations

import mmap
import sys

import pytest

from rlperf.measure.memstate import cpu_mhz, free_blocks, malloc_info, minor_faults

BUDDY = """\
Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3
Node 0, zone    DMA32      2      4      2      2      1      2      0      3      3      1    753
Node 0, zone   Normal   2958   2562   1584   8669   3825   2102    932    542    293      0   2236
"""

CPUINFO = """\
processor\t: 0
model name\t: AMD EPYC
cpu MHz\t\t: 2994.374

processor\t: 1
model name\t: AMD EPYC
cpu MHz\t\t: 3100.000
"""


def test_free_blocks_counts_order_9_units_over_every_zone():
    # order 9: 1 + 3 + 293; order 10 counts twice: 2 * (3 + 753 + 2236)
    assert free_blocks(9, BUDDY) == (1 + 1 + 0) + 2 * (3 + 753 + 2236)  # order-9 column, order-10 twice
    assert free_blocks(10, BUDDY) == 3 + 753 + 2236


def test_cpu_mhz_reads_the_asked_cpu():
    assert cpu_mhz(1, CPUINFO) == 3100.0 and cpu_mhz(0, CPUINFO) == 2994.374
    assert cpu_mhz(5, CPUINFO) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="minor faults are counted by Linux")
def test_writing_fresh_pages_counts_minor_faults():
    buf = mmap.mmap(-1, 256 * mmap.PAGESIZE)
    before = minor_faults()
    for page in range(256):
        buf[page * mmap.PAGESIZE] = 1
    assert minor_faults() - before >= 200  # one fault per first-written page (fault-around maps none: anonymous)
    buf.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc")
def test_malloc_info_reports_the_heap_where_glibc_has_mallinfo2():
    info = malloc_info()
    if info:
        assert info["arena"] > 0 and set(info) >= {"hblkhd", "fordblks", "keepcost"}
