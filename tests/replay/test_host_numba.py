"""`host-numba`: the `host` placement with the Numba row gather (replay.host_gather "plain") instead of
`torch.index_select`, registered last among the single-GPU placements, gathering exactly `host`'s bytes
and measured by `rlperf replay` on a CPU machine."""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks._suite import PLACEMENT_ORDER
from rlperf.cli import main
from rlperf.plan.candidates import TRANSFER_OF
from rlperf.replay import cases
from rlperf.replay.build import build_placement
from rlperf.replay.cases import ReplayCase
from rlperf.replay.placements import PLACEMENTS, lookup
from rlperf.replay.placements.host import HostNumbaReplay
from rlperf.replay.placements.specs import TRANSFERS, invalid_reason
from rlperf.replay.registry import REGISTRY
from rlperf.replay.run import learner_device

numba = pytest.importorskip("numba")

CAP, S, SEED = 2**13, 512, 7


def _built(name: str, threads: int = 1, spec=None):
    case = ReplayCase("g1_motion_tracking", "motrix", name, CAP)
    p = build_placement(spec or case.spec, case.workload, CAP, device=learner_device(), threads=threads, seed=SEED)
    p.sample_rows = S
    p.setup()
    return p


def test_host_numba_is_host_with_the_numba_transfer_appended_to_the_registry_and_the_asv_order():
    spec, host = PLACEMENTS["host-numba"], PLACEMENTS["host"]
    names = list(PLACEMENTS)
    assert names.index("host-numba") == names.index("gpu-compact-a16-fused") + 1  # appended after it
    assert list(REGISTRY).index("host-numba") == names.index("host-numba")  # a single-GPU one, before the rank ones
    assert "host-numba" in cases.DEFAULT_PLACEMENTS
    assert PLACEMENT_ORDER.count("host-numba") == 1
    assert PLACEMENT_ORDER.index("host-numba") == PLACEMENT_ORDER.index("gpu-compact-a16-fused") + 1
    assert (spec.storage, spec.sampler, spec.transfer) == ("host-fp32", "torch", "h2d-numba")
    numba_t, h2d = TRANSFERS["h2d-numba"], TRANSFERS["h2d"]
    assert (numba_t.metrics, numba_t.memory, numba_t.kinds) == (h2d.metrics, h2d.memory, h2d.kinds)
    assert spec.requires == ("numba",) and not spec.needs_cuda and numba_t.peer is None
    assert lookup("storage=host-fp32,transfer=h2d-numba") is spec
    assert TRANSFER_OF["h2d-numba"] == "h2d"


def test_h2d_numba_refuses_layouts_that_elide_next_obs():
    assert "elides next_obs" in invalid_reason("host-compact", "torch", "h2d-numba")
    assert invalid_reason("host-bf16-slim", "torch", "h2d-numba") is None  # whole rows of another dtype are fine


def test_a_missing_numba_is_a_skip_with_the_reason(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == "numba" else real(m, *a))
    assert PLACEMENTS["host-numba"].unavailable_reason() == "placement 'host-numba' needs numba; not installed"
    assert PLACEMENTS["host"].unavailable_reason() is None


def test_host_numba_sets_up_on_numba_threads_and_verifies_its_batch():
    p = _built("host-numba", threads=8)
    assert isinstance(p, HostNumbaReplay)
    assert p.numba_threads == numba.get_num_threads() == min(8, numba.config.NUMBA_NUM_THREADS)
    p.verify()


def test_each_gather_applies_its_own_numba_thread_count_again(monkeypatch):
    """The mask is thread-local and the e2e env kernels set theirs on the same thread between samples."""
    p = _built("host-numba", threads=1)
    calls = []
    real = numba.set_num_threads
    monkeypatch.setattr(numba, "set_num_threads", lambda n: (calls.append(n), real(n)))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)  # an env kernel's count
    p.cpu_sample()
    assert calls[-1] == p.numba_threads == 1 and numba.get_num_threads() == 1


def test_its_cpu_sample_is_hosts_batch_byte_for_byte_and_no_index_select(monkeypatch):
    host, nb = _built("host"), _built("host-numba")
    assert torch.equal(host.storage.table, nb.table)
    want = host.cpu_sample().clone()

    def no_index_select(*args, **kwargs):
        raise AssertionError("host-numba gathered with torch.index_select")

    monkeypatch.setattr(torch, "index_select", no_index_select)
    got = nb.cpu_sample()
    assert got.data_ptr() == nb.staging.data_ptr()  # into its preallocated staging
    assert torch.equal(nb.last_indices(), host.last_indices())  # the same torch sampler and seed: the same draw
    assert torch.equal(got.view(torch.uint8), want.view(torch.uint8))
    edges = torch.tensor([0, CAP - 1 - nb.step_rows, 5, 5] * (S // 4), dtype=torch.int64)  # first, last, repeats
    got = nb.gather(edges, nb.staging).clone()
    monkeypatch.undo()
    assert torch.equal(got.view(torch.uint8), host.gather(edges, host.staging).view(torch.uint8))


def test_a_corrupted_table_fails_verify():
    p = _built("host-numba")
    p.table.view(torch.int32)[:, 0] += 1  # every row now names its successor
    with pytest.raises(AssertionError, match="host-numba: gathered rows do not match"):
        p.verify()


def test_a_layout_whose_stored_row_is_not_its_batch_row_is_refused_before_allocating():
    spec = PLACEMENTS["host-compact"]  # elided: the registry refuses it for h2d-numba, built here by hand
    case = ReplayCase("g1_motion_tracking", "motrix", "host-compact", CAP)
    p = HostNumbaReplay(spec=spec, layout=case.workload.layout, capacity_rows=CAP, sample_rows=S, device=None,
                        threads=1, seed=SEED, step_rows=case.workload.num_envs)
    with pytest.raises(ValueError, match="copies whole rows"):
        p.setup()
    assert not hasattr(p, "storage")


def test_rows_of_an_odd_word_count_are_refused_before_allocating():
    from rlperf.row_layout import RowLayout

    odd = RowLayout(5, 2, 6)  # 2 * 5 + 2 + 3 + 2 * 6 = 27 words: 108 B, not a multiple of 8
    p = HostNumbaReplay(spec=PLACEMENTS["host-numba"], layout=odd, capacity_rows=64, sample_rows=8, device=None,
                        threads=1, seed=SEED)
    with pytest.raises(ValueError, match="multiple of 8 B, layout 'fp32' has 108 B rows"):
        p.setup()
    assert not hasattr(p, "storage")


def test_rlperf_replay_measures_host_numba_on_this_cpu_box(tmp_path):
    out = tmp_path / "results.json"
    # exponent 12 (4,096 rows): the CLI's minimum is 2,049 rows, the size the CLI tests use
    argv = ["replay", "--placements", "host-numba", "--capacity-exponents", "12", "--gpu-counts", "1",
            "--warmup", "0", "--repeat", "2", "--torch-threads", "1", "--no-plots", "--no-ceilings",
            "--out-json", str(out)]
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    [row] = [r for r in doc["results"] if r["placement"] == "host-numba"]
    assert row["verified"] is True and row["capacity_rows"] == 4096
    assert len(row["timings"]["cpu_sample_wall"]["samples_ms"]) == 2
    if not torch.cuda.is_available():
        skipped = {s["metric"] for s in doc["skipped"] if s.get("placement") == "host-numba"}
        assert skipped == {"cpu_sample_h2d_wall", "cpu_sample_then_h2d_wall"}
