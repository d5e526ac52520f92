"""traffic: the byte, memory and time model, and the tables of docs/tier2-plan.md it generates."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlperf.replay.multirank import traffic


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
    assert traffic.markdown() in doc, "regenerate: rlperf traffic"


def test_rlperf_traffic_prints_the_generated_tables(capsys):
    from rlperf.cli import main

    assert main(["traffic"]) == 0
    assert capsys.readouterr().out == traffic.markdown()
