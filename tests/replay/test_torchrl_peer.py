"""TorchRL peer placements: registered like any placement (torch-free specs, skipped with a reason
without the extra), and integrity of what TorchRL's buffer hands back.

The integrity tests need the optional extra (`pip install rlperf[torchrl]`) and skip with that reason
without it; the device-storage variants carry the `gpu` marker.
"""

from __future__ import annotations

import importlib.util

import pytest

from rlperf.errors import UsageError
from rlperf.replay import cases
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE
from rlperf.replay.peers import PEER_SPECS
from rlperf.replay.placements import PLACEMENTS, lookup, valid_combinations
from rlperf.row_layout import RowLayout

HAVE_TORCHRL = all(importlib.util.find_spec(m) is not None for m in ("torchrl", "tensordict"))
needs_torchrl = pytest.mark.skipif(not HAVE_TORCHRL, reason="torchrl/tensordict not installed "
                                   "(optional extra: pip install 'rlperf[torchrl]')")
SMALL = RowLayout(obs_dim=6, action_dim=3, critic_dim=5)  # 32 floats: fast, every field present
HOST_PEERS = ("torchrl-host", "torchrl-host-td")
DEVICE_PEERS = ("torchrl-device", "torchrl-device-td")


def test_peers_are_named_placements_of_the_one_registry():
    assert {n for n, s in PEER_SPECS.items() if s.parts.peer == "torchrl"} == {*HOST_PEERS, *DEVICE_PEERS}
    assert all(PLACEMENTS[name] is spec for name, spec in PEER_SPECS.items())
    assert set(PEER_SPECS.values()) <= set(valid_combinations())
    assert set(PEER_SPECS) <= set(cases.DEFAULT_PLACEMENTS)  # what the CLI, asv and pytest-benchmark enumerate
    assert lookup("storage=device-fp32,transfer=torchrl-td") is PEER_SPECS["torchrl-device-td"]
    for name in HOST_PEERS:
        assert PEER_SPECS[name].metrics == (CPU_SAMPLE, END_TO_END) and not PEER_SPECS[name].needs_cuda
    for name in DEVICE_PEERS:
        assert PEER_SPECS[name].metrics == (GPU_SAMPLE,) and PEER_SPECS[name].needs_cuda


def test_peer_memory_counts_storage_and_the_batch_torchrl_allocates():
    mt = RowLayout(160, 29, 289)
    host = PEER_SPECS["torchrl-host"].memory_need(mt, 2**20, 32_768)
    assert host.host_bytes == 2**20 * 3_720 + 32_768 * 3_720 + 32_768 * 8
    assert host.device_bytes == 32_768 * 3_720
    dev = PEER_SPECS["torchrl-device"].memory_need(mt, 2**20, 32_768)
    assert dev.device_bytes == 2**20 * 3_720 + 32_768 * 3_720 + 32_768 * 8


def test_peers_store_packed_fp32_rows_only():
    with pytest.raises(UsageError, match="stores fp32 rows, not layout 'bf16-slim'"):
        lookup("storage=host-bf16-slim,transfer=torchrl-pinned")


def test_missing_extra_is_a_skip_reason_not_a_crash(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    reason = PEER_SPECS["torchrl-host"].unavailable_reason()
    assert "torchrl" in reason and "tensordict" in reason
    res = cases.Resources(cuda_devices=1, host_available_bytes=64 * 2**30, device_free_bytes=64 * 2**30)
    for name in (*HOST_PEERS, *DEVICE_PEERS):
        verdict = cases.feasibility(cases.ReplayCase("g1_walk_flat", "mujoco", name, 2**15), res)
        assert not verdict.ok and "torchrl" in verdict.reason


def _peer(name: str, *, capacity: int = 3_000, sample_rows: int = 400, device=None):
    spec = PEER_SPECS[name]
    peer = spec.load()(spec=spec, layout=SMALL, capacity_rows=capacity, sample_rows=sample_rows, device=device,
                       threads=1, seed=7)
    peer.setup()
    return peer


@needs_torchrl
@pytest.mark.parametrize("name", HOST_PEERS)
def test_host_peer_rows_are_the_written_rows_before_and_after_wraparound(name):
    import torch

    peer = _peer(name)
    peer.verify()  # full table: slot i holds write id i
    peer.add(torch.empty((1_000, SMALL.width)), pattern=True)  # wraps: slots 0..999 now hold ids 3000..3999
    peer.verify()
    assert peer.written == 4_000
    assert peer.expected_ids(torch.tensor([0, 999, 1_000, 2_999])).tolist() == [3_000, 3_999, 1_000, 2_999]
    assert peer.cpu_sample() is not None and peer.last_indices().shape == (400,)


@needs_torchrl
@pytest.mark.parametrize("name", HOST_PEERS)
def test_host_peer_verify_catches_rows_that_are_not_the_written_ones(name):
    import torch

    peer = _peer(name, capacity=500, sample_rows=400)
    peer.add(torch.zeros((500, SMALL.width)))  # counted as written, but without the pattern
    with pytest.raises(AssertionError, match="differ"):
        peer.verify()


@needs_torchrl
def test_host_peer_is_timed_by_the_shared_runner_like_any_placement():
    """The peer runs through run_case like any placement: guard, setup, row-by-row verification, then
    timing entries with bytes and samples."""
    from rlperf.replay.run import run_case

    case = cases.ReplayCase("g1_walk_flat", "mujoco", "torchrl-host", 2**15)
    res = cases.Resources(cuda_devices=0, host_available_bytes=8 * 2**30, device_free_bytes=0)
    outcome = run_case(case, res, warmup=1, repeat=2, threads=1, seed=3)
    assert outcome.result is not None and outcome.result["verified"]
    entry = outcome.result["timings"][CPU_SAMPLE]
    assert len(entry["samples_ms"]) == 2 and entry["bytes_moved"] == 2 * 32_768 * 1_720
    assert [s["metric"] for s in outcome.skipped] == [END_TO_END]
    assert outcome.result["transfer"] == "torchrl-pinned" and outcome.result["storage_bytes"] == 2**15 * 1_720


@needs_torchrl
@pytest.mark.gpu
@pytest.mark.parametrize("name", (*HOST_PEERS, *DEVICE_PEERS))
def test_peer_on_cuda_hands_the_written_rows_to_the_learner_device(name):
    import torch

    peer = _peer(name, device=torch.device("cuda", 0))
    peer.verify()
    peer.add(torch.empty((1_000, SMALL.width), device=peer.storage_device), pattern=True)
    peer.verify()
    data = peer.sample()
    assert peer._to_rows(data).device.type == "cuda"
    for metric in peer.metrics:
        assert len(peer.measure(metric, warmup=1, repeat=2)) == 2
