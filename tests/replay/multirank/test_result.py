"""result.assemble: the exposed time of each iteration is the slowest rank's, with who it was."""

from __future__ import annotations

import pytest

from rlperf.replay.multirank import RANK_SPECS
from tests.replay.multirank.tiny import cpu_run


@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_the_exposed_time_is_the_slowest_rank_of_each_iteration(placement):
    res = cpu_run(placement).result
    for metric, t in res["timings"].items():
        per_rank = [r["timings"][metric]["samples_ms"] for r in res["per_rank"]]
        assert t["samples_ms"] == [max(col) for col in zip(*per_rank)]
        assert [per_rank[who][i] for i, who in enumerate(t["slowest_rank"])] == t["samples_ms"]
        for r in res["per_rank"]:
            barrier = r["timings"][metric]["barrier_ms"]
            assert len(barrier["samples_ms"]) == 4 and barrier["min_ms"] >= 0
