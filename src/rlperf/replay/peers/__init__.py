"""Peer placements: the replay buffers users would pick instead of ours, measured the same way.

Torch-free at import, like `replay.placements.specs`: `PEER_SPECS` are ordinary `PlacementSpec`s, so the
case registry can list them beside the built-in placements with one line
(`SPECS.update(PEER_SPECS)`, or the new registry's equivalent); the implementations load only when a
point runs and skip with a reason when the optional extra (`pip install rlperf[torchrl]`) is absent.
"""

from __future__ import annotations

from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE
from rlperf.replay.placements.specs import INDEX_BYTES, MemoryNeed, PlacementSpec

TORCHRL_REQUIRES = ("torchrl", "tensordict")


def _torchrl_host(row: int, cap: int, s: int) -> MemoryNeed:
    """Host storage + the batch TorchRL allocates per sample + its indices; one device copy of the batch."""
    return MemoryNeed(cap * row + s * row + s * INDEX_BYTES, s * row)


def _torchrl_device(row: int, cap: int, s: int) -> MemoryNeed:
    """Device storage + the batch TorchRL allocates per sample + its indices (there and on the host)."""
    return MemoryNeed(s * INDEX_BYTES, cap * row + s * row + s * INDEX_BYTES)


_T = "rlperf.replay.peers.torchrl_peer:"
PEER_SPECS: dict[str, PlacementSpec] = {s.name: s for s in (
    PlacementSpec("torchrl-host", "TorchRL ReplayBuffer, LazyTensorStorage on the host, RandomSampler, packed "
                  "rows; batch pinned by the buffer, then H2D", (CPU_SAMPLE, END_TO_END),
                  _T + "TorchRLHostPacked", _torchrl_host, requires=TORCHRL_REQUIRES),
    PlacementSpec("torchrl-host-td", "TorchRL ReplayBuffer, LazyTensorStorage on the host, RandomSampler, "
                  "TensorDict fields; batch pinned by the buffer, then H2D", (CPU_SAMPLE, END_TO_END),
                  _T + "TorchRLHostFields", _torchrl_host, requires=TORCHRL_REQUIRES),
    PlacementSpec("torchrl-device", "TorchRL ReplayBuffer, LazyTensorStorage(device=cuda), RandomSampler, "
                  "packed rows", (GPU_SAMPLE,), _T + "TorchRLDevicePacked", _torchrl_device, needs_cuda=True,
                  requires=TORCHRL_REQUIRES),
    PlacementSpec("torchrl-device-td", "TorchRL ReplayBuffer, LazyTensorStorage(device=cuda), RandomSampler, "
                  "TensorDict fields", (GPU_SAMPLE,), _T + "TorchRLDeviceFields", _torchrl_device,
                  needs_cuda=True, requires=TORCHRL_REQUIRES),
)}

__all__ = ["PEER_SPECS", "TORCHRL_REQUIRES"]
