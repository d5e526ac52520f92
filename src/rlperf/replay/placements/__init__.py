"""Placements: named storage x sampler x transfer combinations (specs torch-free), loaded on demand."""

from rlperf.replay.placements.specs import (PLACEMENTS, SPECS, MemoryNeed, PlacementSpec, combination, lookup,
                                            parse_combination, valid_combinations)

__all__ = ["PLACEMENTS", "SPECS", "MemoryNeed", "PlacementSpec", "combination", "lookup", "parse_combination",
           "valid_combinations"]
