"""The huge-page probe: `range_backing` sums the smaps mappings that overlap a range, and on this kernel it
tells an advised mapping from one refused huge pages."""

from __future__ import annotations

import mmap

import pytest
import torch

from rlperf.replay.huge_pages import (HUGE_PAGE, PAGE, advise_huge_pages, host_table_backing, range_backing,
                                      tensor_backing, thp_mode)

SMAPS = """\
7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Size:               2048 kB
Rss:                2048 kB
AnonHugePages:         0 kB
THPeligible:    0
VmFlags: rd wr mr mw me ac
7f0000200000-7f0000800000 rw-p 00000000 00:00 0
Size:               6144 kB
Rss:                5120 kB
AnonHugePages:      4096 kB
THPeligible:    1
VmFlags: rd wr mr mw me ac hg
7f0000800000-7f0000a00000 rw-p 00000000 00:00 0
Size:               2048 kB
Rss:                2048 kB
AnonHugePages:      2048 kB
THPeligible:    1
VmFlags: rd wr mr mw me ac hg
"""


def test_range_backing_sums_only_the_mappings_that_overlap_the_range():
    # the range starts 4 KiB before the second mapping and ends inside it: the first two overlap, not the third
    got = range_backing(0x7F0000200000 - PAGE, 4 * 2**20, smaps=SMAPS)
    assert got["mappings"] == 2 and got["mapped_bytes"] == 8 * 2**20
    assert got["rss_bytes"] == 7 * 2**20 and got["anon_huge_bytes"] == 4 * 2**20
    assert got["eligible_bytes"] == 6 * 2**20 and got["huge_share"] == pytest.approx(4 / 7)
    assert got["offset_in_huge_page"] == HUGE_PAGE - PAGE


def test_range_backing_of_an_unmapped_range_is_empty():
    got = range_backing(0x10000, PAGE, smaps=SMAPS)
    assert got["mappings"] == 0 and got["rss_bytes"] == 0 and got["huge_share"] is None


def _touched(advise_huge: bool) -> tuple[mmap.mmap, torch.Tensor]:
    """16 MiB of a fresh private anonymous mapping, from its first 2 MiB boundary (a shared mapping, Python's
    default, is shmem and never THP-eligible), advised for huge pages or refused them, then written."""
    buf = mmap.mmap(-1, 9 * HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    whole = torch.frombuffer(buf, dtype=torch.uint8)
    skip = -whole.data_ptr() % HUGE_PAGE
    t = whole[skip: skip + 8 * HUGE_PAGE]
    assert advise_huge_pages(t.data_ptr(), t.numel(), huge=advise_huge)
    t.fill_(1)
    return buf, t


@pytest.mark.skipif(thp_mode() not in ("always", "madvise"), reason=f"transparent huge pages are {thp_mode()!r}")
def test_a_mapping_refused_huge_pages_reads_no_huge_bytes_and_an_advised_one_is_eligible():
    _small_buf, small = _touched(False)  # the buffers stay referenced while the tensors read them
    _huge_buf, huge = _touched(True)
    refused, advised = tensor_backing(small), tensor_backing(huge)
    assert refused["rss_bytes"] >= small.numel() and refused["anon_huge_bytes"] == 0
    assert refused["eligible_bytes"] == 0 and refused["huge_share"] == 0
    assert advised["eligible_bytes"] >= huge.numel() and advised["mapped_bytes"] >= huge.numel()
    assert advised["offset_in_huge_page"] == huge.data_ptr() % HUGE_PAGE


def test_only_a_host_table_has_a_backing_to_record():
    class Owner:
        def __init__(self, table=None):
            if table is not None:
                self.table = table

    host = torch.zeros((1024, 930))
    backing = host_table_backing(Owner(host))  # the table's own range (its mapping's RSS moves between reads)
    assert (backing["address"], backing["nbytes"]) == (host.data_ptr(), host.nbytes) and backing["mappings"] >= 1
    assert host_table_backing(Owner(torch.empty((4, 4), device="meta"))) is None  # a device table: not host pages
    assert host_table_backing(Owner()) is None
