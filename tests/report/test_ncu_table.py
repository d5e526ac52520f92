"""The Nsight Compute summarizer on small fake CSVs in ncu's two layouts (raw: a column per metric and a
units row; details: a row per metric), and the kernel probe's A/B table; the script's bad input exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlperf.report.ncu_table import _unit_scale, ab_markdown, kernel_medians, ncu_markdown, read_launches

ROOT = Path(__file__).resolve().parents[2]
HEAD = ['"ID"', '"Process ID"', '"Process Name"', '"Host Name"', '"Kernel Name"', '"Context"', '"Stream"',
        '"Block Size"', '"Grid Size"', '"Device"', '"CC"']
METRICS = ["dram__bytes_read.sum", "gpu__time_duration.sum", "lts__t_sector_hit_rate.pct",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
           "smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio"]
UNITS = ["Mbyte", "usecond", "%", "", "", "", ""]


def _launch(i, kernel, block, values):
    fixed = [str(i), "77", "python3", "h200", kernel, "1", "13", block, "(4096, 1, 1)", "0", "9.0"]
    return ",".join(f'"{v}"' for v in fixed + values)


RAW = "\n".join([
    "==PROF== Connected to process 77 (python3)",
    "sample_int4: kernel sample_int4, 3 launches profiled",
    ",".join(HEAD + [f'"{m}"' for m in METRICS]),
    ",".join(['""'] * len(HEAD) + [f'"{u}"' for u in UNITS]),
    _launch(0, "sample_int4", "(256, 1, 1)", ["120.00", "35.0", "1.5", "1,000", "4,000", "2.00", "0"]),
    _launch(1, "sample_int4", "(256, 1, 1)", ["124.00", "37.0", "1.7", "1,000", "4,000", "2.20", "0"]),
    _launch(2, "sample_int4", "(256, 1, 1)", ["122.00", "36.0", "1.6", "1,000", "4,000", "2.10", "0"]),
    _launch(3, "sample_compact", "(256, 1, 1)", ["130.00", "57.0", "9.5", "2,000", "10,000", "5.00", "0.01"]),
    "==PROF== Disconnected from process 77",
])


def test_each_kernel_is_a_column_of_medians_in_base_units_with_the_derived_rows():
    medians = kernel_medians(read_launches(RAW), {"sample_int4": "gpu-fused-bf16"})
    assert list(medians) == ["gpu-fused-bf16", "sample_compact"]
    bf16 = medians["gpu-fused-bf16"]
    assert bf16["launches"] == 3 and bf16["gpu__time_duration.sum"] == pytest.approx(36e-6)  # usecond -> s
    assert bf16["dram__bytes_read.sum"] == pytest.approx(122e6)
    lines = ncu_markdown(RAW, labels={"sample_int4": "gpu-fused-bf16"}, sample_rows=1000)
    cells = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]] for ln in lines[2:]}
    assert lines[0].split("|")[2].strip() == "gpu-fused-bf16"
    assert cells["duration us"] == ["36.00", "57.00"]
    assert cells["DRAM read MiB"] == [f"{122e6 / 2**20:.2f}", f"{130e6 / 2**20:.2f}"]
    assert cells["load sectors / request"] == ["4.00", "5.00"]
    assert cells["DRAM read B per sampled row"] == ["122,000", "130,000"]
    assert cells["L2 hit rate %"] == ["1.6", "9.5"]
    assert cells["stall long_scoreboard (warps per issue)"] == ["2.10", "5.00"]
    assert "stall sleeping (warps per issue)" not in cells  # below STALL_MIN in every kernel
    assert "achieved occupancy %" not in cells  # not in this report: no row, not a row of dashes


def test_one_kernel_launched_with_two_block_sizes_gets_a_column_for_each():
    raw = RAW.replace(_launch(2, "sample_int4", "(256, 1, 1)", ["122.00", "36.0", "1.6", "1,000", "4,000", "2.10",
                                                                "0"]),
                      _launch(2, "sample_int4", "(512, 1, 1)", ["122.00", "36.0", "1.6", "1,000", "4,000", "2.10",
                                                                "0"]))
    assert list(kernel_medians(read_launches(raw))) == ["sample_int4 (256, 1, 1)", "sample_int4 (512, 1, 1)",
                                                         "sample_compact"]


def test_the_details_page_reads_as_the_same_launches():
    head = ",".join(HEAD + ['"Section Name"', '"Metric Name"', '"Metric Unit"', '"Metric Value"'])
    fixed = '"0","77","python3","h200","sample_compact","1","13","(256, 1, 1)","(4096, 1, 1)","0","9.0"'
    text = "\n".join([head, f'{fixed},"GPU Speed Of Light Throughput","Duration","usecond","57.10"',
                      f'{fixed},"Command line profiler metrics","dram__bytes_read.sum","Gbyte","0.13"',
                      f'{fixed},"Occupancy","Achieved Occupancy","%","n/a"'])
    (launch,) = read_launches(text)
    assert launch["kernel"] == "sample_compact" and launch["metrics"]["Duration"] == pytest.approx(57.1e-6)
    assert launch["metrics"]["dram__bytes_read.sum"] == pytest.approx(0.13e9)
    assert "Achieved Occupancy" not in launch["metrics"]  # n/a is no number
    assert "| duration us | 57.10 |" in [" ".join(ln.split()) for ln in ncu_markdown(text)]


@pytest.mark.parametrize("unit, scale", [("byte", 1), ("Kbyte", 1e3), ("Gbyte/second", 1e9), ("nsecond", 1e-9),
                                         ("cycle/nsecond", 1e9), ("Mhz", 1e6), ("%", 1), ("", 1), ("sector", 1)])
def test_units_become_bytes_seconds_and_per_second(unit, scale):
    assert _unit_scale(unit) == pytest.approx(scale)


def test_a_report_with_no_launch_is_an_error_not_an_empty_table():
    with pytest.raises(ValueError, match="no profiled kernel launches"):
        ncu_markdown("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n")


def test_the_ab_table_puts_each_variant_against_its_placements_default():
    rows = [{"placement": "p", "variant": "p threads=256", "checked": True, "same_output": True,
             "median_ms": 0.05, "medians_ms": [0.05, 0.051]},
            {"placement": "p", "variant": "p threads=64", "checked": True, "same_output": False,
             "median_ms": 0.06, "medians_ms": [0.06], "registers": 40, "warps_a_row": 4},
            {"placement": "p", "variant": "p threads=256 step=0", "checked": False, "same_output": None,
             "median_ms": 0.04, "medians_ms": [0.04]},
            {"placement": "p", "variant": "p threads=256 layout=a16", "checked": True, "compared": "fields",
             "same_output": True, "median_ms": 0.045, "medians_ms": [0.045]},
            {"placement": "p", "variant": "p threads=128 layout=a16", "checked": True, "compared": "fields",
             "same_output": False, "median_ms": 0.045, "medians_ms": [0.045]}]
    lines = [" ".join(ln.split()) for ln in ab_markdown(rows)]
    assert "| p threads=256 | yes | - | - | 0.0500 | 1.000 | 0.0500 0.0510 |" in lines
    assert "| p threads=64 | no | 40 | 4 | 0.0600 | 1.200 | 0.0600 |" in lines
    assert "| p threads=256 step=0 | not checked (other rows) | - | - | 0.0400 | 0.800 | 0.0400 |" in lines
    # another layout's batch is checked field by field, and says so
    assert ("| p threads=256 layout=a16 | fields: yes (other layout: batch differs by padding, zero) | - | - | 0.0450 "
            "| 0.900 | 0.0450 |") in lines
    assert "| p threads=128 layout=a16 | fields: no (other layout) | - | - | 0.0450 | 0.900 | 0.0450 |" in lines


def _script(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "ncu_table.py"), *args], capture_output=True,
                          text=True)


def test_the_script_prints_the_table_and_exits_2_on_bad_input(tmp_path):
    raw = tmp_path / "ncu-raw.csv"
    raw.write_text(RAW)
    ok = _script(str(raw), "--label", "sample_compact=gpu-compact-fused", "--sample-rows", "1000")
    assert ok.returncode == 0 and "gpu-compact-fused" in ok.stdout and "DRAM read B per sampled row" in ok.stdout
    assert _script(str(tmp_path / "missing.csv")).returncode == 2
    bad = _script(str(raw), "--label", "sample_compact")
    assert bad.returncode == 2 and "KERNEL=NAME" in bad.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("==ERROR== ERR_NVGPUCTRPERM\n")
    assert _script(str(empty)).returncode == 2
    ab = tmp_path / "ab.jsonl"
    ab.write_text(json.dumps({"placement": "p", "variant": "p threads=256", "checked": True, "same_output": True,
                              "median_ms": 0.05, "medians_ms": [0.05]}) + "\n")
    proc = _script("--ab", str(ab))
    assert proc.returncode == 0 and "p threads=256" in proc.stdout and "x default" in proc.stdout
