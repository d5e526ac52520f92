"""analysis.md for a replay result document (the reference's table, plus every placement vs its floor)."""

from __future__ import annotations

import statistics

from rlperf.measure.guards import gib
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END, GPU_SAMPLE, H2D, LABELS
from rlperf.report import replay_table as rt
from rlperf.report.replay_layouts import layout_lines
from rlperf.report.tables import markdown_table


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _clocks(doc: dict) -> str:
    """How each metric was timed, read from the results (so an old file is described as it was run)."""
    seen = {}
    for res in doc["results"]:
        for metric, t in res["timings"].items():
            seen.setdefault(LABELS[metric], t.get("clock", "?"))
    return "; ".join(f"{label}: {clock}" for label, clock in seen.items()) or "none measured"


def _mib(v: float | None) -> str:
    return "-" if v is None else f"{v / 2**20:.2f}"


def _gib_cell(v: float | None) -> str:
    return "-" if v is None else gib(v)


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def analysis_lines(doc: dict) -> list[str]:
    wl, args = doc["workload"], doc["args"]
    lines = [
        "# SAC Replay Buffer Sampling Time Analysis",
        "",
        f"- Command: `{doc['command']}`",
        f"- Machine: {doc['device_info']}",
        f"- Sample count per rank: {wl['sample_rows_per_rank']:,} rows "
        f"({wl['sample_bytes_per_rank'] / 2**20:.2f} MiB)",
        f"- Packed width: {wl['row_floats']} float32 = {wl['row_bytes']:,} B per row",
        f"- Collector rows per learner iteration: {wl['collector_rows_per_iteration']:,}; "
        f"sample:new ratio per rank {wl['sample_new_ratio_per_rank']:g}x",
        f"- Timing: warmup {args['warmup']}, repeat {args['repeat']}, torch threads {args['torch_threads']}; "
        f"clocks as recorded in this run: {_clocks(doc)}.",
        "- Times are medians of each point's samples (the per-placement table adds the minimum).",
        "- CPU sample+H2D is its own pass (gather then copy, synchronised), so it can differ from the sum.",
        "- Sampling is uniform with replacement over the full capacity (steady state of a full ring); "
        "every host page is written before timing and one gathered batch is verified row by row.",
        "",
    ]
    reference = []
    for gpus in rt.gpu_counts(doc):
        for capacity_rows in rt.capacity_rows_at(doc, gpus):
            cpu = rt.reference_ms(doc, "host", CPU_SAMPLE, gpus, capacity_rows)
            h2d = rt.reference_ms(doc, "host", H2D, gpus, capacity_rows)
            e2e = rt.reference_ms(doc, "host", END_TO_END, gpus, capacity_rows)
            gpu = rt.reference_ms(doc, "gpu", GPU_SAMPLE, gpus, capacity_rows)
            sp = rt.speedup(doc, gpus, capacity_rows)
            share = (cpu + h2d) if cpu and h2d else None
            reference.append([gpus, f"{capacity_rows:,}", _ms(cpu), _ms(h2d), _ms(e2e), _ms(gpu),
                              None if sp is None else f"{sp:.1f}x", f"{cpu / share:.0%}" if share else None,
                              f"{h2d / share:.0%}" if share else None])
    lines += markdown_table(["GPUs", "Capacity rows", "CPU sample ms", "H2D ms", "CPU sample+H2D ms", "GPU sample ms",
                             "Speedup", "CPU sample share", "H2D share"], reference, align="rrrrrrrrr")
    lines += ["", "## Every placement against its physical floor", "",
              "Floor = bytes moved / ceiling measured on this machine in the same run "
              "(host copy rate, pinned H2D rate, device copy rate).", ""]
    placements = [[res["placement"], res.get("layout"), f"{res['capacity_rows']:,}", LABELS[metric],
                   f"{t['median_ms']:.3f}", f"{t['min_ms']:.3f}", f"{t['effective_Bps'] / 1e9:.1f}",
                   _ms(t.get("floor_ms")), _ratio(t.get("x_floor")), _mib(res.get("batch_bytes_per_iteration")),
                   _gib_cell(res.get("host_peak_rss_bytes")), _gib_cell(res.get("device_peak_bytes"))]
                  for res in doc["results"] for metric, t in res["timings"].items()]
    lines += markdown_table(["placement", "layout", "capacity rows", "metric", "median ms", "min ms", "effective GB/s",
                             "floor ms", "x floor", "MiB per iteration", "peak host RSS GiB", "peak device GiB"],
                            placements, align="llrlrrrrrrrr")
    kernels = [(res, t) for res in doc["results"] for t in res["timings"].values() if t.get("kernel_bytes")]
    if kernels:
        lines += ["", "Bytes a fused kernel itself reads and writes per learner iteration (counted from the plan it "
                  "follows), against its floor: the batch payload read once and written once.", ""]
        lines += markdown_table(["placement", "capacity rows", "kernel MiB per iteration", "floor MiB", "x floor bytes"],
                                [[res["placement"], f"{res['capacity_rows']:,}", _mib(t["kernel_bytes"]),
                                  _mib(t["bytes_moved"]), f"{t['kernel_x_payload']:.4f}"] for res, t in kernels],
                                align="lrrrr")
    if doc.get("layouts"):
        lines += ["", *layout_lines(doc["layouts"], f"{args['task']}/{args['sim']}")]
    if doc.get("ceilings"):
        c = doc["ceilings"]
        lines += ["", "Ceilings measured: " + ", ".join(
            f"{k.removesuffix('_Bps')} {v / 1e9:.1f} GB/s" for k, v in c.items() if k.endswith("_Bps"))]
    for k, r in (doc.get("raised_ceilings") or {}).items():  # report.replay_withdraw.raise_ceiling
        lines += ["", f"Ceiling raised: {k.removesuffix('_Bps')} measured {r['measured'] / 1e9:.1f} GB/s in this "
                  f"run, {r['value'] / 1e9:.1f} GB/s in {r['from']} on the same machine; floors use the latter: "
                  f"{r['reason']}"]
    for k, w in (doc.get("withdrawn_ceilings") or {}).items():  # report.replay_withdraw
        lines += ["", f"Ceiling withdrawn, its floors not shown: {k.removesuffix('_Bps')} (measured "
                  f"{w['value'] / 1e9:.1f} GB/s): {w['reason']}"]
    if doc["skipped"]:
        lines += ["", "## Skipped", ""]
        for s in doc["skipped"]:
            metric = f" {LABELS[s['metric']]}" if s.get("metric") else ""
            capacity_rows = f"{s['capacity_rows']:,} rows" if s.get("capacity_rows") else "-"
            lines.append(f"- {s['placement']}{metric}, {s['world_size']} GPU(s), {capacity_rows}: {s['reason']}")
    if doc.get("replaced"):  # report.replay_merge, --replace: points a later part measured again
        lines += ["", "## Replaced by a later part", ""]
        for e in doc["replaced"]:
            point = e.get("result") or e.get("skipped")
            was = "skipped" if "skipped" in e else ", ".join(
                f"{LABELS.get(m, m)} median {_ms(statistics.median(t['samples_ms']))} ms"
                for m, t in point.get("timings", {}).items() if isinstance(t, dict) and t.get("samples_ms"))
            lines.append(f"- {point['placement']}, {point.get('world_size', 1)} GPU(s), {point['capacity_rows']:,} rows "
                         f"({was or 'no timing'}; {e['in']}), replaced by {e['by']}: {e['reason']}")
    return lines
