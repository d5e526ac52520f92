"""Peer placements: the replay buffers users would pick instead of ours, measured the same way.

They are registered in `replay.placements.specs` like any placement (a peer Transfer per way the
library is used, and named specs `torchrl-*`), so the CLI, asv and pytest-benchmark list them; this
package holds the implementations, loaded only when a point runs. Without the optional extra
(`pip install rlperf[torchrl]`) a TorchRL point is a skip with that reason. `reference-host` is the
reference benchmark's own host method (docs/workloads.md A8), the bar `host` has to beat.
"""

from __future__ import annotations

from rlperf.replay.placements.specs import PLACEMENTS, TORCHRL_REQUIRES

PEER_SPECS = {name: spec for name, spec in PLACEMENTS.items() if spec.parts.peer}

__all__ = ["PEER_SPECS", "TORCHRL_REQUIRES"]
