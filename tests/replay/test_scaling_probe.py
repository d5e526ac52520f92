"""The batch-scaling probe (replay.scaling_probe): its line fit, its table, clear refusals before anything is
built, and a real run on a GPU."""

from __future__ import annotations

import pytest

from rlperf.errors import UsageError
from rlperf.replay import scaling_probe


def test_the_fit_recovers_a_known_rate_and_fixed_cost():
    rate, fixed_ms = 4.0e12, 0.003  # 4 TB/s and 3 us
    pts = [(b, b / rate * 1e3 + fixed_ms) for b in (1e7, 3e7, 1e8, 4e8)]
    f = scaling_probe.fit(pts)
    assert f["rate_TBps"] == pytest.approx(4.0) and f["fixed_us"] == pytest.approx(3.0)
    assert f["max_residual"] == pytest.approx(0, abs=1e-9)
    bent = scaling_probe.fit(pts[:-1] + [(4e8, 2 * pts[-1][1])])  # a point off the line shows as a residual
    assert bent["max_residual"] > 0.1


def test_the_table_gives_each_method_per_size_and_its_line():
    timings = [{"round": r, "method": m, "rows": s, "bytes_moved": 2 * s * 3720, "ms": 2 * s * 3720 / k + 0.0033}
               for r in range(2) for m, k in (("gpu-fused", 3.9e9), ("copy of 3,720 B rows", 4.1e9))
               for s in (8192, 32768, 131072)]
    rec = {"machine": "m", "gpu": "H200", "exponent": 20, "sizes": [8192, 32768, 131072], "rounds": 2, "repeat": 5,
           "inner": 10, "timings": timings}
    text = scaling_probe.summarize([rec])
    assert "| gpu-fused | " in text and "| 3.900 | 3.30 | 0.0 % |" in text and "| 4.100 | 3.30 |" in text
    assert "32,768 rows" in text


@pytest.mark.parametrize("placements, sizes, words", [
    (["gpu-compact-fused"], scaling_probe.SIZES, ["'gpu-compact-fused'", "valid:", "gpu-fused-bf16"]),
    (["gpu-fused"], (4096, 8192), ["at least 3", "(4096, 8192)"]),
    (["gpu-fused"], (8192, 4096, 16384), ["increasing"]),
])
def test_bad_input_is_refused_before_anything_is_built(placements, sizes, words):
    with pytest.raises(UsageError) as e:
        scaling_probe.probe(placements, sizes)
    assert all(w in str(e.value) for w in words)


@pytest.mark.gpu
def test_a_small_run_on_a_gpu_times_every_method_at_every_size():
    rec = scaling_probe.probe(sizes=(256, 512, 1024), exponent=13, rounds=1, repeat=2)
    methods = {t["method"] for t in rec["timings"]}
    assert methods == {"gpu-fused", "gpu-fused-bf16", "copy of 3,720 B rows", "copy of 1,872 B rows"}
    assert len(rec["timings"]) == 4 * 3 and all(t["ms"] > 0 for t in rec["timings"])
    assert "fitted rate" in scaling_probe.summarize([rec])
