"""The result entry of a multi-rank case, shaped like replay.run's entries plus per-rank and traffic blocks.

`timings[metric]` holds the exposed time (per iteration, the slowest rank after the barrier), with
the same summary, bytes and floor fields as a single-GPU entry, so charts and analysis read it as is.
"""

from __future__ import annotations

from rlperf.measure.stats import summarize
from rlperf.replay.multirank import traffic
from rlperf.replay.multirank.clock import exposed
from rlperf.replay.records import bytes_moved, timing_entry

CLOCK = "wall+sync per rank after a barrier; max over ranks"


def assemble(case, spec, ranks: list[dict], *, warmup: int, repeat: int, ceilings: dict | None) -> dict:
    wl = case.workload
    n = case.gpus
    stored = spec.stored_layout(wl.layout)
    cuda = ranks[0]["device"] != "cpu"
    model = traffic.rank_traffic(case.placement, stored.stored_row_bytes, wl.sample_rows_per_rank, n, cuda=cuda)
    timings = {}
    for metric in ranks[0]["timings"]:
        times, who = exposed([r["timings"][metric]["samples_ms"] for r in ranks])
        timings[metric] = timing_entry(times, metric, bytes_moved(metric, model), warmup=warmup, repeat=repeat,
                                       ceilings=ceilings or {}, clock=CLOCK)
        timings[metric]["slowest_rank"] = who
    measured = [r["traffic"] for r in ranks]
    table_rows = case.capacity_rows // n if spec.sharded else case.capacity_rows
    return {
        "placement": case.placement, "world_size": n, "capacity_rows": case.capacity_rows,
        "harness": "process-per-rank", "backend": ranks[0]["backend"], "rank_device": "cuda" if cuda else "cpu",
        "torch_threads": ranks[0]["threads"], "row_bytes": wl.row_bytes, "stored_row_bytes": stored.stored_row_bytes,
        "replay_bytes_per_rank": table_rows * stored.stored_row_bytes,
        "replay_shared_host": spec.shared_host_table,
        "sample_bytes_per_rank": wl.sample_bytes_per_rank, "global_sample_bytes": wl.global_sample_bytes,
        "sample_new_ratio_per_rank": wl.sample_new_ratio_per_rank,
        "global_sample_new_ratio": wl.global_sample_new_ratio,
        "setup_s": max(r["setup_s"] for r in ranks), "verified": all(r["verified"] for r in ranks),
        "timings": timings,
        "per_rank": [_rank_entry(r) for r in ranks],
        "traffic": {
            "model": {"per_rank": model, "global": {k: v * n for k, v in model.items()}},
            "measured": {"per_rank": measured,
                         "global": {k: sum(m[k] for m in measured) for k in measured[0]}},
        },
    }


def _rank_entry(r: dict) -> dict:
    timings = {}
    for metric, t in r["timings"].items():
        timings[metric] = {"samples_ms": t["samples_ms"], **summarize(t["samples_ms"]),
                           "barrier_ms": {"samples_ms": t["barrier_ms"], **summarize(t["barrier_ms"])}}
    return {k: r[k] for k in ("rank", "device", "threads", "numa_node", "cores", "setup_s", "traffic")} | \
        {"timings": timings}
