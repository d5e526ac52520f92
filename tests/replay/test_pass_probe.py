"""The pass probe (replay.pass_probe): which placements it splits, its CPU modes on any box, its records and
tables, the gap it reports, and clear refusals; the CUDA modes of both families on a GPU."""

from __future__ import annotations

import time

import pytest
import torch

from rlperf.replay import pass_probe

SMALL = dict(capacity_exponent=13, sample_rows=64, threads=1, rounds=3, warmup=0, repeat=2)


def test_it_splits_the_host_passes_of_cpu_sample_then_h2d_and_the_zero_copy_passes():
    families = pass_probe.family_placements()
    assert {"host", "host-pageable", "reference-host", "host-numba"} <= set(families["host"])
    assert {"uva", "uva-bf16"} <= set(families["zero-copy"])
    split = set(families["host"]) | set(families["zero-copy"])
    assert not {"host-pipelined", "gpu-fused", "gpu-cache", "torchrl-pinned"} & split


def test_cpu_modes_run_without_cuda_in_rotating_order_and_tabulate():
    rec = pass_probe.probe("host", modes=pass_probe.CPU_MODES, gap_ms=0.5, **SMALL)
    assert rec["family"] == "host" and rec["modes"] == list(pass_probe.CPU_MODES)
    assert rec["sample_rows"] == 64 and rec["gap_ms"] == 0.5
    firsts = [t["mode"] for t in rec["timings"] if t["position"] == 0]
    assert firsts == ["cpu", "cpu-after-spin", "cpu-after-sleep"]  # the order rotates by one per round
    assert all(len(t["calls"]) == 2 and all(c["ms"] > 0 for c in t["calls"]) for t in rec["timings"])
    text = pass_probe.summarize([rec])
    assert "| cpu-after-spin / cpu |" in text and "| cpu-after-sleep / cpu |" in text and "Gap" not in text


def test_the_idle_gap_comes_before_the_clock_not_inside_it():
    class Fake:
        def cpu_sample(self):
            self.called = time.perf_counter()

    fake, t0 = Fake(), time.perf_counter()
    ms = pass_probe._call(fake, "cpu-after-spin", 30.0, torch)["ms"]
    assert fake.called - t0 >= 0.030  # the spin ran first ...
    assert ms < (fake.called - t0) * 1e3  # ... and is not in the timed call


def test_summary_of_a_gpu_record_gives_the_phases_ratios_and_gap():
    def calls(**v):
        return [v, v]

    timings = []
    for rnd in range(2):
        timings += [{"round": rnd, "mode": "cpu", "calls": calls(ms=2.0)},
                    {"round": rnd, "mode": "h2d", "calls": calls(ms=2.2)},
                    {"round": rnd, "mode": "sample", "calls": calls(ms=5.4)},
                    {"round": rnd, "mode": "pass", "calls": calls(cpu=2.5, launch=0.02, stream_sync=2.8,
                                                                   device_sync=0.01, wall=5.33, device=2.2)}]
    rec = {"placement": "host", "capacity_rows": 2**20, "threads": 16, "machine": "m", "rounds": 2, "repeat": 2,
           "warmup": 2, "gap_ms": 2.2, "pinned": True, "load_before": [0.5, 0, 0], "timings": timings}
    text = pass_probe.summarize([rec])
    assert "| pass.stream_sync | 2.800 |" in text and "| pass.cpu / cpu | 1.250 |" in text
    assert "| sample / pass.wall | 1.013 |" in text and "| pass.device / h2d | 1.000 |" in text
    assert "Gap (sample - cpu - h2d, same round): median 1.200 ms" in text


def test_summary_of_a_zero_copy_record_gives_the_host_share():
    timings = [{"round": 0, "mode": "device-held", "calls": [{"ms": 1.24}]},
               {"round": 0, "mode": "device", "calls": [{"ms": 1.30}]},
               {"round": 0, "mode": "sample", "calls": [{"ms": 1.50}]},
               {"round": 0, "mode": "pass", "calls": [dict(launch=0.05, stream_sync=1.40, device_sync=0.01, wall=1.46,
                                                           device=1.31)]},
               {"round": 0, "mode": "split", "calls": [dict(draw=0.02, args=0.01, launch=0.04, stream_sync=1.3)]},
               {"round": 0, "mode": "call", "calls": [{"ms": 0.03}]}]
    rec = {"placement": "uva-bf16", "capacity_rows": 2**20, "threads": 16, "machine": "m", "rounds": 1, "repeat": 1,
           "warmup": 2, "gap_ms": 2.24, "pinned": False, "load_before": [0.5, 0, 0], "timings": timings}
    text = pass_probe.summarize([rec])
    assert "| pass.launch | 0.050 |" in text and "pass.cpu" not in text
    assert "| device / device-held | 1.048 |" in text
    assert "Gap (sample - device-held, same round): median 0.260 ms" in text
    assert "| split.args | 0.010 |" in text and "| call / split.launch | 0.750 |" in text


@pytest.mark.parametrize("kwargs, words", [
    (dict(placement="gpu-fused"), ["'gpu-fused'", "valid:", "host-pageable", "uva-bf16"]),
    (dict(modes=("cpu", "warm")), ["'warm'", "valid:", "cpu-after-sleep"]),
    (dict(modes=("device",)), ["'device'", "for host", "valid:", "h2d"]),
    (dict(capacity_exponent=11), ["too small", "2,048-row step", ">= 12"]),
])
def test_bad_input_names_the_problem_and_the_choices(kwargs, words):
    args = {**SMALL, **kwargs}
    with pytest.raises(ValueError) as e:
        pass_probe.probe(args.pop("placement", "host"), **args)
    assert all(w in str(e.value) for w in words)


def test_gpu_work_is_refused_without_cuda_before_anything_is_built():
    if torch.cuda.is_available():
        pytest.skip("CUDA is up here")
    with pytest.raises(ValueError, match="modes pass time the GPU: no CUDA device"):
        pass_probe.probe("host", modes=("cpu", "pass"), **SMALL)
    with pytest.raises(ValueError, match="uva-bf16 gathers on the GPU: no CUDA device"):
        pass_probe.probe("uva-bf16", **SMALL)


@pytest.mark.gpu
@pytest.mark.parametrize("placement, gap", [("host", "sample - cpu - h2d"), ("uva-bf16", "sample - device-held"),
                                            ("uva-fused-bf16", "sample - device-held")])
def test_every_mode_on_a_gpu_splits_the_real_pass(placement, gap):
    rec = pass_probe.probe(placement, **SMALL)
    host = placement == "host"
    assert rec["modes"] == list(pass_probe.HOST_MODES if host else pass_probe.ZERO_COPY_MODES)
    assert rec["pinned"] == host and rec["gap_ms"] > 0
    passes = [c for t in rec["timings"] if t["mode"] == "pass" for c in t["calls"]]
    phases = set(pass_probe.PASS_PHASES) - (set() if host else {"cpu"})
    assert all(set(c) == phases and c["device"] > 0 for c in passes)
    assert all(c["wall"] >= c.get("cpu", 0) + c["launch"] + c["stream_sync"] for c in passes)
    assert f"Gap ({gap}" in pass_probe.summarize([rec])
    if host:
        return
    splits = [c for t in rec["timings"] if t["mode"] == "split" for c in t["calls"]]
    fused = placement.startswith("uva-fused")
    assert all(set(c) == set(pass_probe.SPLIT_PHASES) - ({"draw"} if fused else set()) for c in splits)
    assert all(c["launch"] > 0 and c["stream_sync"] > 0 for c in splits)
    calls = [c["ms"] for t in rec["timings"] if t["mode"] == "call" for c in t["calls"]]
    assert calls and all(ms > 0 for ms in calls)
