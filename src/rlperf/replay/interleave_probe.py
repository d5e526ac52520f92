"""Placements timed against each other in one process, round by round (issue 23 §3: `host` against
`reference-host`, interleaved, over fresh processes).

Why: `rlperf replay` times each placement as a block after its set-up, and the H200 host's speed drifts inside a
process by more than the host placements differ (docs/replay-host-vs-reference.md): its per-process ratios of
host-numba to reference-host spread 0.61-1.23 over 5 processes. Here every placement is set up first (each its own
table, one batch verified), then each round times every placement's metrics in an order rotated by one, so drift
touches all alike, and each placement's ratio to `against` is read inside the round. One record per process;
`summarize` tabulates records, per process and over processes, never a best cell.

Each record also keeps how every host table is backed (`huge_pages.host_table_backing`): a placement's table gets its
2 MiB pages, or not, when its pages fault in this process, after the tables set up before it took theirs, and a
random row gather misses the TLB far less on huge pages (about 4 % on the H200 host). A ratio between two host
placements is read with both tables' huge-page shares beside it.
"""

from __future__ import annotations

import os
import statistics
import sys

from rlperf.errors import UsageError, choice_error
from rlperf.replay.metrics import CPU_SAMPLE, END_TO_END

METRICS = (CPU_SAMPLE, END_TO_END)


def _checked(placements, against: str, metrics) -> tuple[list[str], tuple[str, ...]]:
    """The placements (`against` among them, first) and metrics to time, or a UsageError naming the valid choices."""
    from rlperf.replay.registry import REGISTRY

    single = [name for name, spec in REGISTRY.items() if not spec.multi_rank]
    names = list(dict.fromkeys(placements))
    for name in names + [against]:
        if name not in single:
            raise choice_error("placement", name, single)
    names = [against] + [n for n in names if n != against]
    if len(names) < 2:
        raise UsageError(f"nothing to compare: give at least one placement besides {against!r}")
    metrics = tuple(metrics or METRICS)
    common = [m for m in REGISTRY[names[0]].metrics if all(m in REGISTRY[n].metrics for n in names)]
    if not common:
        raise UsageError("these placements share no metric to compare: "
                         + "; ".join(f"{n} reports {', '.join(REGISTRY[n].metrics)}" for n in names))
    for metric in metrics:
        if metric not in common:
            raise choice_error(f"metric for {', '.join(names)}", metric, common)
    import torch

    for name in names:  # what cannot run here is refused now, not as a crash after the others were built
        spec = REGISTRY[name]
        if spec.unavailable_reason():
            raise UsageError(spec.unavailable_reason())
        if spec.transfer == "uva" and not torch.cuda.is_available():
            raise UsageError(f"{name} gathers on the GPU: no CUDA device is visible")
    return names, metrics


def probe(placements, *, against: str = "reference-host", capacity_exponent: int = 20, threads: int | None = None,
          rounds: int = 12, warmup: int = 2, repeat: int = 10, metrics=None, seed: int = 0,
          sample_rows: int | None = None) -> dict:
    """Set every placement up (verified), then `rounds` rounds, each timing every placement's `metrics`
    (`Placement.measure`: `warmup` + `repeat` calls) in an order rotated by one a round. `sample_rows`: a smaller
    batch than the workload's (tests)."""
    import torch

    from rlperf.measure.machine import cpu_model, machine_name
    from rlperf.replay.cases import default_torch_threads
    from rlperf.replay.huge_pages import host_table_backing
    from rlperf.replay.pass_probe import build_verified

    names, metrics = _checked(placements, against, metrics)
    threads = threads or default_torch_threads(1)
    built = {name: build_verified(name, capacity_exponent, sample_rows, threads, seed) for name in names}
    load_before = os.getloadavg()
    timings = []
    for rnd in range(rounds):
        order = names[rnd % len(names):] + names[: rnd % len(names)]
        for name in order:
            for metric in metrics:
                samples = built[name][0].measure(metric, warmup=warmup, repeat=repeat)
                timings.append({"round": rnd, "placement": name, "metric": metric, "position": order.index(name),
                                "samples_ms": samples})
    first = built[names[0]][0]
    return {"pid": os.getpid(), "argv": sys.argv, "placements": names, "against": against, "metrics": list(metrics),
            "capacity_rows": first.capacity_rows, "sample_rows": first.sample_rows, "threads": threads,
            "torch_threads": torch.get_num_threads(), "machine": machine_name(), "cpu_model": cpu_model(),
            "torch": torch.__version__, "cuda": torch.cuda.is_available(),
            "setup_s": {name: s for name, (_, s) in built.items()},
            "tables": {name: host_table_backing(pl) for name, (pl, _) in built.items()},
            "load_before": list(load_before), "load_after": list(os.getloadavg()), "rounds": rounds, "warmup": warmup,
            "repeat": repeat,
            "timings": timings}


def round_medians(rec: dict) -> dict[tuple[str, str], dict[int, float]]:
    """(placement, metric) -> round -> the median of that round's calls."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for t in rec["timings"]:
        out.setdefault((t["placement"], t["metric"]), {})[t["round"]] = statistics.median(t["samples_ms"])
    return out


def paired(rec: dict) -> dict[tuple[str, str], list[float]]:
    """(placement, metric) -> per-round ratios to the record's `against` placement, same metric, same round."""
    med = round_medians(rec)
    out = {}
    for (name, metric), rounds in med.items():
        if name == rec["against"]:
            continue
        base = med[(rec["against"], metric)]
        out[(name, metric)] = [rounds[r] / base[r] for r in sorted(rounds) if r in base]
    return out


def _backing_line(rec: dict) -> list[str]:
    """One line: each host table's share of bytes in 2 MiB pages (records before 2026-12-05 did not keep it)."""
    tables = {name: b for name, b in rec.get("tables", {}).items() if b}
    if not tables:
        return []
    share = {name: "-" if b["huge_share"] is None else f"{b['huge_share']:.2f}" for name, b in tables.items()}
    return ["Host tables in 2 MiB pages (share of resident bytes): "
            + ", ".join(f"{name} {v}" for name, v in share.items()) + ".", ""]


def _spread(v: list[float], digits: int = 3) -> str:
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}..{max(v):.{digits}f})"


def summarize(records: list[dict]) -> str:
    """Markdown: per process, each placement's median over rounds and its per-round ratio to `against`; then, over
    processes, the median of the process medians with their range and how many processes had it faster."""
    lines = []
    over: dict[tuple[str, str, str], list[float]] = {}
    for k, rec in enumerate(records, 1):
        med, ratios = round_medians(rec), paired(rec)
        lines += [f"### Process {k}: {', '.join(rec['placements'])}; {rec['capacity_rows']:,} rows, {rec['threads']} "
                  f"threads, {rec['machine']}",
                  "",
                  f"{rec['rounds']} rounds, the order rotated each round; a round times each metric as a median of "
                  f"{rec['repeat']} calls after {rec['warmup']} warmups; load before {rec['load_before'][0]:.2f}.",
                  "", *_backing_line(rec),
                  f"| placement | metric | median over rounds, ms (min..max) | x {rec['against']}, per round: median "
                  "(min..max) | rounds faster |",
                  "|---|---|---:|---:|---:|"]
        for (name, metric), rounds in med.items():
            r = ratios.get((name, metric))
            pair = "-" if r is None else _spread(r)
            faster = "-" if r is None else f"{sum(x < 1 for x in r)} of {len(r)}"
            lines.append(f"| {name} | {metric} | {_spread(list(rounds.values()))} | {pair} | {faster} |")
            if r:
                over.setdefault((name, metric, rec["against"]), []).append(statistics.median(r))
        lines.append("")
    if len(records) > 1:
        lines += [f"### Over {len(records)} processes", "",
                  "| placement | metric | against | process medians of the per-round ratio: median (min..max) "
                  "| processes faster |", "|---|---|---|---:|---:|"]
        for (name, metric, against), v in over.items():
            lines.append(f"| {name} | {metric} | {against} | {_spread(v)} | {sum(x < 1 for x in v)} of {len(v)} |")
        lines.append("")
    return "\n".join(lines)


__all__ = ["METRICS", "paired", "probe", "round_medians", "summarize"]
