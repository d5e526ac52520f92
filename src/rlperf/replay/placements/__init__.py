"""Placements by name: one short module per family behind the Placement contract."""

from __future__ import annotations

from rlperf.replay.placements.base import MemoryNeed, Placement
from rlperf.replay.placements.cache import GpuCacheReplay
from rlperf.replay.placements.gpu import GpuPaddedReplay, GpuReplay
from rlperf.replay.placements.host import HostPageableReplay, HostPipelinedReplay, HostReplay
from rlperf.replay.placements.uva import UvaReplay

PLACEMENTS: dict[str, type[Placement]] = {
    cls.name: cls
    for cls in (HostReplay, HostPageableReplay, HostPipelinedReplay, UvaReplay, GpuReplay, GpuPaddedReplay,
                GpuCacheReplay)
}

__all__ = ["PLACEMENTS", "MemoryNeed", "Placement"]
