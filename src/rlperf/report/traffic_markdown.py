"""The generated block of docs/tier2-plan.md section 4 (`rlperf traffic`): the multi-rank model's tables
(`replay.multirank.traffic`) under their headings, written by `report.tables` like every other table."""

from __future__ import annotations

from rlperf.measure.guards import DEVICE_SAFETY_FACTOR, HOST_FRACTION
from rlperf.replay.multirank.traffic import (
    GIB, PRODUCTION_GUARD, Host, Rates, Table, device_memory_table, host_memory_table, largest_fit_table, layout_table,
    prediction_table, reference_table, traffic_table)
from rlperf.report.tables import markdown_table


def table_lines(table: Table) -> list[str]:
    """Label columns left, figures right."""
    align = "l" * table.labels + "r" * (len(table.headers) - table.labels)
    return markdown_table(table.headers, table.rows, align=align)


def markdown(mt=None, walk=None) -> str:
    """Every table of docs/tier2-plan.md, computed from the composed workloads."""
    from rlperf.workload import compose

    mt = mt or compose("g1_motion_tracking", "motrix")
    walk = walk or compose("g1_walk_flat", "motrix")
    rates, host = Rates(), Host()
    parts = [
        f"#### T1. Bytes per learner iteration, {mt.task}/{mt.sim} (S = {mt.sample_rows_per_rank:,} rows x "
        f"{mt.row_bytes:,} B, packed fp32)", "", *table_lines(traffic_table(mt)), "",
        "#### T2. Row sizes per layout", "", *table_lines(layout_table(mt, walk)), "",
        f"#### T3. Device memory per rank (GiB, {mt.task}) and fit on one H200 "
        f"({host.device_free_bytes / GIB:.0f} GiB free: ok = x{DEVICE_SAFETY_FACTOR} within "
        f"{PRODUCTION_GUARD} x free, tight = within free)", "", *table_lines(device_memory_table(mt, host)), "",
        f"#### T4. shared-host at 8 GPUs: host memory (GiB) and fit on 128 / 560 GiB hosts "
        f"(total within {HOST_FRACTION} x RAM, table within /dev/shm = RAM / 2)", "",
        *table_lines(host_memory_table(mt)), "",
        "#### T5. Largest capacity that fits (motion tracking; 8 x H200 for the device placements)", "",
        *table_lines(largest_fit_table(mt, host)), "",
        f"#### T6. Predicted exposed ms per learner iteration, {mt.task}/{mt.sim} (host: {host.name}, "
        f"{host.threads_per_rank} threads per rank, {host.ram_bytes / GIB:.0f} GiB RAM)", "",
        *table_lines(prediction_table(mt, rates=rates, host=host)), "",
        f"#### T7. Reference #813 (thread-per-rank, {walk.task}/{walk.sim} shape: {walk.sample_rows_per_rank:,} x "
        f"{walk.row_bytes:,} B) against the model", "", *table_lines(reference_table(walk, rates, host)),
    ]
    return "\n".join(parts) + "\n"


__all__ = ["markdown", "table_lines"]
