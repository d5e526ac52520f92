"""Replay: packed row layout, storage contract, placements and the replay case registry."""
