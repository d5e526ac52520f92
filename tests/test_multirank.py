"""Process-per-rank replay: every gathered row is checked against its index on every rank and placement,
bytes match the traffic model, the slowest rank is what gets reported, and infeasible points are skips.

CPU runs use gloo and 2 spawned ranks on tiny capacities (S = 256 rows); the multi-GPU run is `gpu`-marked.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from rlperf.replay.cases import ReplayCase, Resources
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D
from rlperf.replay.multirank import RANK_SPECS, feasibility, run_multirank_case
from rlperf.replay.multirank import traffic
from rlperf.report.traffic_markdown import markdown as traffic_markdown
from rlperf.replay.multirank.affinity import rank_cores
from rlperf.replay.multirank.clock import exposed
from rlperf.workload import Workload, compose

GIB = 2**30
CPU_BOX = Resources(0, 16 * GIB, 0)
H200 = Resources(1, 125 * GIB, 139 * GIB)
HGX = Resources(8, 550 * GIB, 139 * GIB)
TINY = ("algo.batch_size=128", "algo.updates_per_step=2")  # S = 256 rows of 3,720 B


@functools.lru_cache(maxsize=None)
def tiny_workload() -> Workload:
    return compose("g1_motion_tracking", "motrix", list(TINY))


@dataclass(frozen=True)
class TinyCase:
    """A ReplayCase stand-in with a tiny per-rank batch (the harness reads only these fields)."""

    placement: str
    capacity_rows: int = 4096
    gpus: int = 2

    @property
    def workload(self) -> Workload:
        return tiny_workload().with_gpus(self.gpus)


@functools.lru_cache(maxsize=None)
def cpu_run(placement: str):
    """One spawned 2-rank gloo run per placement, shared by the tests that read it."""
    return run_multirank_case(TinyCase(placement), CPU_BOX, warmup=1, repeat=4, seed=7, cpu_ranks=True)


# ---- runs on 2 CPU ranks ----------------------------------------------------------------------------
@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_every_rank_verifies_its_batch_and_the_entry_has_the_run_py_shape(placement):
    outcome = cpu_run(placement)
    res = outcome.result
    assert res is not None, outcome.skipped
    assert res["verified"] is True and res["harness"] == "process-per-rank" and res["backend"] == "gloo"
    assert (res["placement"], res["world_size"], res["capacity_rows"]) == (placement, 2, 4096)
    assert [r["rank"] for r in res["per_rank"]] == [0, 1]
    assert res["global_sample_new_ratio"] == 2 * res["sample_new_ratio_per_rank"]
    expected = {CPU_SAMPLE} if placement == "shared-host" else {GPU_SAMPLE}
    assert set(res["timings"]) == expected
    for t in res["timings"].values():
        assert len(t["samples_ms"]) == 4 and t["min_ms"] <= t["median_ms"] <= t["max_ms"]
        assert t["clock"].endswith("max over ranks") and t["bytes_moved"] > 0


def test_host_to_device_metrics_are_skipped_with_a_reason_on_cpu_ranks():
    skipped = {s["metric"]: s["reason"] for s in cpu_run("shared-host").skipped}
    assert set(skipped) == {H2D, END_TO_END} and all("CPU ranks" in r for r in skipped.values())


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


@pytest.mark.parametrize("placement", ["shared-host", "gpu-replica", "rank-local"])
def test_measured_bytes_equal_the_model_for_deterministic_placements(placement):
    res = cpu_run(placement).result
    model = res["traffic"]["model"]["per_rank"]
    for measured in res["traffic"]["measured"]["per_rank"]:
        assert measured == model
    assert res["traffic"]["measured"]["global"] == res["traffic"]["model"]["global"]


def test_sharded_global_exchange_bytes_balance_and_match_the_model_in_expectation():
    res = cpu_run("sharded-global").result
    measured = res["traffic"]["measured"]
    total = measured["global"]
    assert total["interconnect_in"] == pytest.approx(total["interconnect_out"])  # every byte sent is received
    model = res["traffic"]["model"]["per_rank"]
    assert model["interconnect_in"] == 256 / 2 * (3720 + 8)  # (N-1)/N of the batch, rows + int64 requests
    for rank in measured["per_rank"]:
        # 6 calls x 256 draws per rank: the remote share is 1/2 +- 0.013 (1 sigma); allow 15%.
        assert rank["interconnect_in"] == pytest.approx(model["interconnect_in"], rel=0.15)
        assert rank["device_read"] == pytest.approx(model["device_read"], rel=0.15)


# ---- the same placements in this process, as a 1-rank gloo group ----------------------------------
@pytest.fixture()
def one_rank(tmp_path):
    import torch.distributed as dist

    from rlperf.replay.multirank.context import RankContext

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1)
    yield RankContext(0, 1, None, "gloo", 1, 0, [0], dist.group.WORLD, dist.group.WORLD)
    dist.destroy_process_group()


def _build(name: str, ctx, capacity: int = 1024):
    from rlperf.replay.multirank.rank_tables import shared_host_table

    spec, wl = RANK_SPECS[name], tiny_workload()
    shared = shared_host_table(capacity, wl.layout.width) if spec.shared_host_table else None
    p = spec.load()(ctx=ctx, shared_table=shared, spec=spec, layout=wl.layout, capacity_rows=capacity,
                    sample_rows=wl.sample_rows_per_rank, device=None, threads=1, seed=1)
    p.setup()
    return p


@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_a_single_rank_world_verifies_every_placement(one_rank, placement):
    _build(placement, one_rank).verify()


def test_verification_catches_a_shard_holding_the_wrong_rows(one_rank):
    p = _build("sharded-global", one_rank)
    p.table.view(torch.int32)[:, 0] += 1  # every row now claims the next global id
    with pytest.raises(AssertionError, match="do not match"):
        p.verify()


def test_the_shared_table_is_in_shared_memory_with_every_page_written():
    from rlperf.replay.multirank.rank_tables import shared_host_table
    from rlperf.replay.tables import row_ids

    t = shared_host_table(512, 930)
    assert t.is_shared() and torch.equal(row_ids(t), torch.arange(512)) and bool((t[:, 1:] != 0).all())


# ---- skip reasons (no process is spawned) -----------------------------------------------------------
def test_gpu_counts_above_the_visible_devices_are_skipped_with_the_count():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**20, gpus=8), H200)
    assert not verdict.ok and verdict.reason == "needs 8 GPUs, 1 visible"
    outcome = run_multirank_case(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**20, gpus=8), H200,
                                 warmup=0, repeat=1, seed=0)
    assert outcome.result is None and outcome.skipped[0]["reason"] == "needs 8 GPUs, 1 visible"


def test_single_process_placements_name_their_multi_gpu_forms():
    verdict = feasibility(ReplayCase("g1_motion_tracking", "motrix", "host", 2**20, gpus=2), HGX)
    assert not verdict.ok and "single-process" in verdict.reason and "shared-host" in verdict.reason


def test_shards_must_split_evenly():
    verdict = feasibility(TinyCase("rank-local", capacity_rows=4096, gpus=3), CPU_BOX, cpu_ranks=True)
    assert not verdict.ok and "equal shards" in verdict.reason


def test_device_memory_is_guarded_per_rank_and_sharding_buys_capacity():
    replica = feasibility(ReplayCase("g1_motion_tracking", "motrix", "gpu-replica", 2**26, gpus=8), HGX)
    assert not replica.ok and "per rank" in replica.reason and "GiB" in replica.reason
    sharded = ReplayCase("g1_motion_tracking", "motrix", "sharded-global", 2**28, gpus=8)
    assert feasibility(sharded, HGX).ok  # 116.25 GiB per rank: tight, within the guard
    assert not feasibility(ReplayCase("g1_motion_tracking", "motrix", "sharded-global", 2**29, gpus=8), HGX).ok


def test_the_shared_table_needs_room_in_dev_shm():
    case = ReplayCase("g1_motion_tracking", "motrix", "shared-host", 2**24, gpus=8)
    verdict = feasibility(case, HGX, shm_free=64 * 2**20)
    assert not verdict.ok and "/dev/shm" in verdict.reason and "GiB" in verdict.reason
    assert feasibility(case, HGX, shm_free=300 * GIB).ok


# ---- the model --------------------------------------------------------------------------------------
def test_model_bytes_match_the_spec_figures():
    s, row = 32_768, 3_720
    host = traffic.rank_traffic("shared-host", row, s, 8)
    assert 8 * host["host_read"] == 975_175_680  # docs/limits.md 1.1: 8 ranks of host reads
    assert 8 * traffic.rank_dram_bytes("shared-host", row, s, cuda=False) == 3 * 975_175_680  # ~2.9 GB
    sharded = traffic.rank_traffic("sharded-global", row, s, 8)
    assert sharded["interconnect_in"] - 7 / 8 * s * 8 == 7 / 8 * s * row == 106_659_840  # ~106.7 MB per rank
    assert traffic.layout_row_bytes(160, 29, 289) == {
        "packed fp32": 3720, "padded fp32": 3728, "padded bf16": 1872, "next-obs elided fp32": 1924,
        "elided, bf16 + fp32 scalars": 968}


def test_the_time_model_reproduces_the_measured_single_gpu_host_path_and_flat_gpu_scaling():
    host = traffic.host_path_ms(3720, 32_768, 1, 20, numa="one-node")
    assert host["end_to_end"] == pytest.approx(4.85)
    gpu = [traffic.device_path_ms("gpu-replica", 3720, 32_768, n) for n in (1, 2, 4, 8)]
    assert len(set(gpu)) == 1
    e2e = [traffic.host_path_ms(3720, 32_768, n, 20, numa="one-node")["end_to_end"] for n in (1, 2, 4, 8)]
    assert e2e == sorted(e2e) and e2e[-1] > 2 * e2e[0] - 1  # shared host DRAM makes 8 ranks slower


def test_the_plan_document_carries_the_generated_tables_verbatim():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "tier2-plan.md").read_text()
    assert traffic_markdown() in doc, "regenerate: rlperf traffic"


def test_rlperf_traffic_prints_the_generated_tables(capsys):
    from rlperf.cli import main

    assert main(["traffic"]) == 0
    assert capsys.readouterr().out == traffic_markdown()


# ---- helpers ----------------------------------------------------------------------------------------
def test_exposed_picks_the_slowest_rank_per_iteration():
    assert exposed([[1.0, 5.0, 2.0], [3.0, 1.0, 2.5]]) == ([3.0, 5.0, 2.5], [1, 0, 1])


def test_ranks_bind_to_their_gpus_numa_node_in_blocks(monkeypatch):
    from rlperf.replay.multirank import affinity

    monkeypatch.setattr(affinity, "numa_nodes", lambda visible: [list(range(0, 8)), list(range(8, 16))])
    got = [rank_cores(r, 4, set(range(16))) for r in range(4)]
    assert got == [(0, [0, 1, 2, 3]), (0, [4, 5, 6, 7]), (1, [8, 9, 10, 11]), (1, [12, 13, 14, 15])]
    assert rank_cores(0, 1, set(range(16))) == (0, list(range(8)))


# ---- the real thing ---------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA devices")
@pytest.mark.parametrize("placement", list(RANK_SPECS))
def test_two_gpu_ranks_with_nccl_verify_and_time_every_metric(placement):
    case = ReplayCase("g1_motion_tracking", "motrix", placement, 2**16, gpus=2)
    outcome = run_multirank_case(case, Resources.probe(), warmup=1, repeat=3, seed=5)
    assert outcome.result is not None, outcome.skipped
    assert outcome.result["backend"] == "nccl"
    assert set(outcome.result["timings"]) == set(RANK_SPECS[placement].metrics)
