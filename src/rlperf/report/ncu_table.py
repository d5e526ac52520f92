"""Nsight Compute's CSV (`ncu --import R --csv --page raw`, or `--page details`) as one Markdown table: a
column per kernel (median over its profiled launches), a row per metric that explains a gather's speed
(DRAM bytes and throughput, L2 hit rate, sectors per request, occupancy, registers, warp stalls, cycles).

Metrics the report lacks print as "-", so one summarizer serves a full metric list and a sections-only
fallback. Also the kernel probe's CUDA-event A/B rows (`replay.kernel_probe.ab_timings`) as a table.
"""

from __future__ import annotations

import csv
import io
import re
import statistics

from rlperf.report.tables import markdown_table

# (label, metric names tried in order (raw names, then the details page's display names), scale from base
# units (bytes, seconds, per second), format); derived rows are computed in `metric_rows`
METRICS: tuple[tuple[str, tuple[str, ...], float, str], ...] = (
    ("duration us", ("gpu__time_duration.sum", "Duration"), 1e6, "{:.2f}"),
    ("elapsed cycles (SM)", ("sm__cycles_elapsed.max", "sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max",
                             "Elapsed Cycles"), 1, "{:,.0f}"),
    ("SM clock MHz", ("gpc__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second", "SM Frequency"),
     1e-6, "{:,.0f}"),
    ("DRAM read MiB", ("dram__bytes_read.sum",), 2**-20, "{:.2f}"),
    ("DRAM write MiB", ("dram__bytes_write.sum",), 2**-20, "{:.2f}"),
    ("DRAM GB/s", ("dram__bytes.sum.per_second",), 1e-9, "{:,.0f}"),
    ("DRAM throughput % of peak", ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                   "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM Throughput"), 1,
     "{:.1f}"),
    ("memory throughput % of peak", ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",), 1,
     "{:.1f}"),
    ("L2 hit rate %", ("lts__t_sector_hit_rate.pct", "L2 Hit Rate"), 1, "{:.1f}"),
    ("L1 hit rate %", ("l1tex__t_sector_hit_rate.pct", "L1/TEX Hit Rate"), 1, "{:.1f}"),
    ("global load requests", ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",), 1, "{:,.0f}"),
    ("global load sectors", ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",), 1, "{:,.0f}"),
    ("global store sectors", ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",), 1, "{:,.0f}"),
    ("L2 sectors read from L1", ("lts__t_sectors_srcunit_tex_op_read.sum",), 1, "{:,.0f}"),
    ("achieved occupancy %", ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"), 1,
     "{:.1f}"),
    ("theoretical occupancy %", ("sm__maximum_warps_per_active_cycle_pct", "Theoretical Occupancy"), 1, "{:.1f}"),
    ("registers / thread", ("launch__registers_per_thread", "Registers Per Thread"), 1, "{:.0f}"),
    ("block size", ("launch__block_size", "Block Size"), 1, "{:.0f}"),
    ("grid size", ("launch__grid_size", "Grid Size"), 1, "{:,.0f}"),
    ("instructions executed (warp)", ("smsp__inst_executed.sum", "sm__inst_executed.sum", "Executed Instructions"),
     1, "{:,.0f}"),
    ("warp cycles per issued instruction", ("smsp__average_warp_latency_per_inst_issued.ratio",
                                            "Warp Cycles Per Issued Instruction"), 1, "{:.1f}"),
)
_STALL = re.compile(r"^smsp__average_warps?_(?:latency_)?issue_stalled_(\w+?)(?:_per_issue_active)?\.ratio$")
STALL_MIN = 0.05  # stall reasons below this in every kernel (warps per issue) are left out
_PAIRS = (("load sectors / request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
          ("store sectors / request", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"))


_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SECONDS = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3}
_LAUNCH_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                   "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value")


def _number(text) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def _unit_scale(unit: str) -> float:
    """The factor to base units: bytes, seconds, counts, per second (`Gbyte/second`, `cycle/nsecond`, `usecond`)."""
    def part(u: str) -> float:
        if u in _SECONDS:
            return _SECONDS[u]
        return _PREFIX[u[0]] if u[:1] in _PREFIX and u[1:2].islower() else 1.0

    num, _, den = (unit or "").strip().partition("/")
    return part(num) / (part(den) if den else 1.0)


def read_launches(text: str) -> list[dict]:
    """Every profiled launch of an ncu CSV, {"kernel", "block", "metrics": {name: value in base units}}, from the
    raw page (a column per metric, then a units row) or the details page (a row per metric); ncu's `==PROF==`
    lines and the program's own output dropped."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    if not rows:
        return []
    launches: dict[str, dict] = {}
    if "Metric Name" in rows[0]:  # details page
        for r in rows:
            value = _number(r.get("Metric Value"))
            if _number(r.get("ID")) is None or value is None:
                continue
            launch = launches.setdefault(r["ID"], {"kernel": r["Kernel Name"], "block": r.get("Block Size", ""),
                                                   "metrics": {}})
            launch["metrics"][r["Metric Name"]] = value * _unit_scale(r.get("Metric Unit", ""))
        return list(launches.values())
    units = next((r for r in rows if _number(r.get("ID")) is None), {})
    for r in rows:
        if _number(r.get("ID")) is None:
            continue
        metrics = {}
        for col, text_ in r.items():
            value = _number(text_)
            if col not in _LAUNCH_COLUMNS and value is not None:
                metrics[col] = value * _unit_scale(units.get(col, ""))
        launches[r["ID"]] = {"kernel": r["Kernel Name"], "block": r.get("Block Size", ""), "metrics": metrics}
    return list(launches.values())


def kernel_medians(launches: list[dict], labels: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
    """Per kernel (renamed by `labels`; its block size appended when one kernel ran with several): the median of
    every metric over its launches, and their count as `launches`, in first-launch order."""
    labels = labels or {}
    blocks: dict[str, set] = {}
    for launch in launches:
        blocks.setdefault(_base_name(launch["kernel"]), set()).add(launch["block"])
    groups: dict[str, list[dict]] = {}
    for launch in launches:
        name = _base_name(launch["kernel"])
        key = labels.get(name, name) + (f" {launch['block']}" if len(blocks[name]) > 1 else "")
        groups.setdefault(key, []).append(launch["metrics"])
    out = {}
    for key, ms in groups.items():
        names = dict.fromkeys(n for m in ms for n in m)
        out[key] = {n: statistics.median(m[n] for m in ms if n in m) for n in names}
        out[key]["launches"] = len(ms)
    return out


def _base_name(kernel: str) -> str:
    return kernel.split("(")[0].strip()


def metric_rows(medians: dict[str, dict[str, float]], *, sample_rows: int | None = None) -> list[list[str | None]]:
    """[label, value per kernel...] rows: METRICS, derived ratios, DRAM bytes per sampled row, stall reasons."""
    kernels = list(medians)

    def row(label, values, fmt):
        return [label] + [None if v is None else fmt.format(v) for v in values]

    def pick(m, names, scale=1.0):
        for n in names:
            if n in m:
                return m[n] * scale
        return None

    out = [row("profiled launches", [medians[k]["launches"] for k in kernels], "{:d}")]
    for label, names, scale, fmt in METRICS:
        values = [pick(medians[k], names, scale) for k in kernels]
        if any(v is not None for v in values):
            out.append(row(label, values, fmt))
    for label, num, den in _PAIRS:
        values = [medians[k][num] / medians[k][den] if medians[k].get(num) is not None and medians[k].get(den)
                  else None for k in kernels]
        if any(v is not None for v in values):
            out.append(row(label, values, "{:.2f}"))
    if sample_rows:
        for label, name in (("DRAM read B per sampled row", "dram__bytes_read.sum"),
                            ("DRAM write B per sampled row", "dram__bytes_write.sum")):
            values = [medians[k][name] / sample_rows if name in medians[k] else None for k in kernels]
            if any(v is not None for v in values):
                out.append(row(label, values, "{:,.0f}"))
    stalls = {m.group(1): c for k in kernels for c in medians[k] if (m := _STALL.match(c))}
    for reason, col in sorted(stalls.items()):
        values = [medians[k].get(col) for k in kernels]
        if max((v or 0.0) for v in values) >= STALL_MIN:
            out.append(row(f"stall {reason} (warps per issue)", values, "{:.2f}"))
    return out


def ncu_markdown(text: str, *, labels: dict[str, str] | None = None, sample_rows: int | None = None) -> list[str]:
    """The Markdown table of a raw-page CSV: a column per kernel, a row per metric."""
    medians = kernel_medians(read_launches(text), labels)
    if not medians:
        raise ValueError("no profiled kernel launches in this CSV (was the profile empty?)")
    return markdown_table(["metric", *medians], metric_rows(medians, sample_rows=sample_rows),
                          align="l" + "r" * len(medians))


def _same_batch(r: dict) -> str:
    """The A/B row's check: byte for byte, or field by field for another layout (`compared`, absent in rows
    written before it existed: bytes)."""
    if not r["checked"]:
        return "not checked (other rows)"
    if r.get("compared") == "fields":
        return ("fields: yes (other layout: batch differs by padding, zero)" if r["same_output"]
                else "fields: no (other layout)")
    return "yes" if r["same_output"] else "no"


def ab_markdown(rows: list[dict]) -> list[str]:
    """The kernel probe's A/B rows: each variant's median against its placement's default launch (the first), with
    its kernel's registers a thread and warps a row where the row has them (rows written before 2026-12-05 have
    neither, rows written before the fp32 split became the default no warps: "-")."""
    base = {}
    for r in rows:
        base.setdefault(r["placement"], r["median_ms"])
    body = [[r["variant"], _same_batch(r), r.get("registers", "-"), r.get("warps_a_row", "-"),
             f"{r['median_ms']:.4f}", f"{r['median_ms'] / base[r['placement']]:.3f}",
             " ".join(f"{m:.4f}" for m in r["medians_ms"])] for r in rows]
    return markdown_table(["variant", "same batch as default", "registers a thread", "warps a row", "median ms",
                           "x default", "round medians ms"], body, align="llrrrrl")


__all__ = ["METRICS", "ab_markdown", "kernel_medians", "metric_rows", "ncu_markdown", "read_launches"]
