"""traffic: the byte, memory and time model, and the tables of docs/tier2-plan.md it generates."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlperf.replay.multirank import traffic
from rlperf.report.traffic_markdown import markdown as traffic_markdown


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
    doc = (Path(__file__).resolve().parents[3] / "docs" / "tier2-plan.md").read_text()
    assert traffic_markdown() in doc, "regenerate: rlperf traffic"


def test_rlperf_traffic_prints_the_generated_tables(capsys):
    from rlperf.cli import main

    assert main(["traffic"]) == 0
    assert capsys.readouterr().out == traffic_markdown()


ROW, S = 3720, 256


def test_an_unknown_placement_has_no_model():
    with pytest.raises(KeyError):
        traffic.rank_traffic("host", ROW, S, 2)
    with pytest.raises(KeyError):
        traffic.device_path_ms("shared-host", ROW, S, 2)


def test_only_shared_host_touches_host_dram_and_pcie_and_cpu_ranks_skip_the_copy():
    batch = S * ROW
    assert traffic.rank_traffic("shared-host", ROW, S, 2)["h2d"] == batch
    assert traffic.rank_traffic("shared-host", ROW, S, 2, cuda=False)["h2d"] == 0
    assert traffic.rank_dram_bytes("shared-host", ROW, S) - traffic.rank_dram_bytes("shared-host", ROW, S,
                                                                                    cuda=False) == batch
    for p in ("gpu-replica", "rank-local", "sharded-global"):
        t = traffic.rank_traffic(p, ROW, S, 2)
        assert t["h2d"] == t["host_read"] == 0 and traffic.rank_dram_bytes(p, ROW, S) == 0


def test_sharded_global_crosses_nvlink_only_with_more_than_one_rank_and_costs_more_as_ranks_grow():
    assert traffic.rank_traffic("sharded-global", ROW, S, 1)["interconnect_in"] == 0
    ms = [traffic.device_path_ms("sharded-global", ROW, S, n) for n in (1, 2, 4, 8)]
    assert ms == sorted(ms) and ms[0] > traffic.device_path_ms("gpu-replica", ROW, S, 1)


@pytest.mark.parametrize("need, fit", [(69, "ok"), (70, "tight"), (86, "tight"), (87, "no")])
def test_device_fit_is_ok_within_the_production_guard_and_tight_within_free(need, fit):
    assert traffic.device_fit(need, 100) == fit  # x1.15: 69 -> 79.35 <= 80; 70 -> 80.5; 87 -> 100.05 > 100


def test_host_fit_needs_the_total_within_the_ram_budget_and_the_table_within_dev_shm():
    assert traffic.host_fit(80, 50, 100) == "ok"
    assert traffic.host_fit(81, 10, 100) == "no"
    assert traffic.host_fit(60, 51, 100) == "no"


def test_predictions_are_skips_where_the_table_does_not_fit():
    from tests.replay.multirank.tiny import tiny_workload

    rows = {(r[0], r[2]): r[3:] for r in traffic.prediction_rows(tiny_workload())}
    replica = rows[("gpu-replica", "8")]  # 2^20 .. 2^26 rows of 3,720 B on one 139 GiB GPU
    assert replica[-1] == "skip" and all(cell != "skip" for cell in replica[:-1])
    assert float(replica[0]) > 0
