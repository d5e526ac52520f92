"""Placements by name: specs (torch-free) and their implementations, loaded on demand."""

from rlperf.replay.placements.specs import SPECS, MemoryNeed, PlacementSpec

__all__ = ["SPECS", "MemoryNeed", "PlacementSpec"]
