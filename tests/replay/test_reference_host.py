"""`reference-host`, the reference benchmark's host method as a peer, and the host path judged against it:
registered like the other peers, drawing and gathering exactly as the reference does, and `host`
(huge-page table) gathering the same rows as the reference's plain table for the same indices."""

from __future__ import annotations

import torch

from benchmarks._suite import PLACEMENT_ORDER
from rlperf.replay import cases
from rlperf.replay.build import build_placement
from rlperf.replay.cases import ReplayCase
from rlperf.replay.peers import PEER_SPECS
from rlperf.replay.placements import PLACEMENTS, lookup
from rlperf.replay.registry import REGISTRY
from rlperf.replay.run import learner_device

CAP, S, SEED = 2**13, 512, 7


def _built(name: str, capacity: int = CAP):
    case = ReplayCase("g1_motion_tracking", "motrix", name, capacity)
    p = build_placement(case.spec, case.workload, capacity, device=learner_device(), threads=1, seed=SEED)
    p.sample_rows = S
    p.setup()
    return p


def test_reference_host_is_a_reported_peer_of_the_one_registry_appended_last_to_the_asv_order():
    spec = REGISTRY["reference-host"]
    assert spec is PLACEMENTS["reference-host"] is PEER_SPECS["reference-host"] and spec.parts.peer == "reference"
    assert spec.metrics == PLACEMENTS["host"].metrics and spec.storage == "host-fp32" and not spec.needs_cuda
    assert lookup("storage=host-fp32,transfer=reference-h2d") is spec
    assert "reference-host" in cases.DEFAULT_PLACEMENTS
    assert PLACEMENT_ORDER.index("reference-host") == PLACEMENT_ORDER.index("sharded-global") + 1  # appended
    assert PLACEMENT_ORDER.count("reference-host") == 1


def test_reference_host_draws_like_the_reference_and_verifies_its_batch():
    p = _built("reference-host")
    p.verify()
    p.cpu_sample()
    gen = torch.Generator().manual_seed(SEED)  # the reference's host generator: randint over the whole capacity
    draws = [torch.randint(CAP, (S,), generator=gen) for _ in range(2)]
    assert torch.equal(p.last_indices(), draws[1])  # verify() drew first, then cpu_sample()
    assert int(p.last_indices().max()) >= CAP - 2048  # the newest step is not excluded, unlike rlperf's samplers
    assert p.staging.data_ptr() == p.cpu_sample().data_ptr()  # gathers into its preallocated staging


def test_host_gathers_the_same_rows_as_the_reference_for_the_same_indices():
    host, ref = _built("host"), _built("reference-host")
    assert torch.equal(host.storage.table, ref.table)  # the same pattern, written through the storage
    idx = torch.randint(CAP - host.step_rows, (S,), generator=torch.Generator().manual_seed(3))
    got = host.gather(idx, host.staging).clone()
    want = torch.index_select(ref.table, 0, idx)
    assert torch.equal(got[:, : host.layout.width], want[:, : ref.layout.width])


def test_a_pageable_host_table_asks_for_huge_pages_and_the_reference_table_does_not():
    import pytest

    from rlperf.replay.huge_pages import mapping_flags, thp_mode

    if thp_mode() not in ("always", "madvise"):
        pytest.skip(f"transparent huge pages are {thp_mode()!r} here")
    # 2^14 rows of 3,720 B (61 MiB): above glibc's largest mmap threshold, so each table is a fresh mapping
    # (a smaller one may reuse heap pages that an earlier table advised)
    cap = 2**14
    host, ref = _built("host", cap), _built("reference-host", cap)
    assert host.storage.huge_pages
    assert mapping_flags(host.storage.table[cap // 2].data_ptr()).get("THPeligible") == 1  # inside the advised pages
    if thp_mode() == "madvise":
        assert mapping_flags(ref.table[cap // 2].data_ptr()).get("THPeligible") == 0
