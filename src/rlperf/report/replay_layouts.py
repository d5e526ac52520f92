"""The layout table: bytes per stored row, per batch row and per learner iteration, against the target.

Every figure is computed from `replay.layouts` for the run's workload (the JSON's `layouts` block),
never typed; the target is the issue's budget for one learner iteration's payload.
"""

from __future__ import annotations

from rlperf.report.tables import markdown_table

TARGET_MIB_PER_ITERATION = 60.0  # compact payload budget for g1_motion_tracking (one rank, one iteration)


def layout_lines(layouts: list[dict], label: str) -> list[str]:
    lines = [f"## Layouts ({label}): bytes per row and per learner iteration", "",
             f"Batch = {layouts[0]['sample_rows']:,} rows per rank per iteration; elided layouts store each obs "
             "once (next_obs by index) but a batch still carries every field. "
             f"Target: <= {TARGET_MIB_PER_ITERATION:g} MiB per iteration.", ""]
    rows = [[r["layout"], r["vectors"], r["actions"], r["flags"], "yes" if r["elide_next"] else "no",
             f"{r['stored_row_bytes']:,}", f"{r['batch_row_bytes']:,}", f"{r['batch_mib_per_iteration']:.2f}",
             "yes" if r["batch_mib_per_iteration"] <= TARGET_MIB_PER_ITERATION else "no"] for r in layouts]
    lines += markdown_table(["layout", "obs/critic", "actions", "flags", "next-obs elided", "stored B/row",
                             "batch B/row", "MiB per iteration", "<= target"], rows, align="llllcrrrc")
    return lines


__all__ = ["TARGET_MIB_PER_ITERATION", "layout_lines"]
