"""The `one_rank` fixture: this process as a 1-rank gloo group, for the placements, the exchange and the
clock without spawning."""

from __future__ import annotations

import pytest


@pytest.fixture()
def one_rank(tmp_path):
    import torch.distributed as dist

    from rlperf.replay.multirank.context import RankContext

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1)
    yield RankContext(0, 1, None, "gloo", 1, 0, [0], dist.group.WORLD, dist.group.WORLD)
    dist.destroy_process_group()
