"""Time the experimental host gathers (`replay.host_gather`) against `torch.index_select`, interleaved.

Why interleaved, in one process, and then again in fresh processes: on a shared host a process runs at its
own speed and a round's speed drifts (docs/replay-host-vs-reference.md), so each round times every method
on the same table, the same index vectors and the same staging, in a rotating order, and the comparison
that counts is the per-round ratio to `index_select` (paired: a drift of the host hits both). A result that
holds in one process only is a property of that process; the probe is run in several.

`probe` returns one record per process (JSON-ready): what ran (machine, threads, affinity, page backing of
the table, whether the staging is pinned) and per round and method the gather times in ms. `summarize`
turns records of several processes into Markdown tables. The gather alone is timed: the index draw
(`randint`) is the same for every method and is left out, except with `index="random-per-call"`: each timed call
first draws its vector with `torch.randint(out=)` into one buffer, as a placement's `cpu_sample` does, every method
of a round drawing the same vectors. Why: on the H200 host the Numba `plain` gather beat `index_select` by 10 % here
but not as the `host-numba` placement, which draws on torch's generator before each Numba gather
(docs/replay-host-vs-reference.md); this is that one difference, measured alone.

With `h2d=True` (CUDA only) each timed gather is followed by the `host` placement's H2D of the staging
(`copy_(non_blocking=True)` on a side stream, then that stream synchronised), timed on its own, and by a second
H2D of the same staging ("again"). Why: `host`'s CPU sample+H2D measured about 1.1-1.4 ms more than its CPU
sample and its H2D timed apart (docs/replay-host-vs-reference.md); the two copies tell whether the copy right
after a gather is the slow part (the CPU's dirty staging lines) and whether a gather's store kind changes it.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time

INDEX_SELECT = "index_select"
COPY_FLOOR = "contiguous-copy"  # not a gather: the same bytes read and written sequentially (a floor)
WIDTH, SAMPLE_ROWS = 930, 32768  # the motion-tracking packed fp32 row (3,720 B), one learner iteration
INDEX_KINDS = ("random", "sequential", "random-per-call")


def _load() -> dict:
    """What else ran: the load average and the CPU pressure line (on a shared box other work competes)."""
    out = {}
    for key, path in (("loadavg", "/proc/loadavg"), ("cpu_pressure", "/proc/pressure/cpu")):
        try:
            out[key] = open(path).read().split("\n")[0]
        except OSError:
            out[key] = None
    return out


def _table(rows: int, width: int):
    """The `host` placement's table: pageable, advised for huge pages before the first write, every page
    written (`tables.fill_pattern_`)."""
    import torch

    from rlperf.replay.huge_pages import advise_huge_pages
    from rlperf.replay.tables import fill_pattern_

    t = torch.empty((rows, width), dtype=torch.float32)
    advise_huge_pages(t.data_ptr(), t.nbytes)
    return fill_pattern_(t)


def _methods(variants, table, staging, threads: int, prefetch_rows: int, unavailable: dict) -> dict:
    import numba
    import torch

    from rlperf.replay import host_gather

    def index_select(idx):
        torch.index_select(table, 0, idx, out=staging)

    def floor(idx):
        staging.copy_(table[: staging.shape[0]])

    out = {INDEX_SELECT: index_select, COPY_FLOOR: floor}
    for v in variants:
        try:
            host_gather.check_variant(v)  # never a silent fallback: a variant not built as promised is left out
        except host_gather.GatherUnavailable as e:
            unavailable[v] = str(e)
            continue
        out[v] = lambda idx, v=v: host_gather.gather(v, table, idx, staging, prefetch_rows=prefetch_rows)
    numba.set_num_threads(threads)
    return out


def probe(*, capacity_exponent: int = 20, width: int = WIDTH, sample_rows: int = SAMPLE_ROWS, threads: int,
          rounds: int = 8, warmup: int = 2, repeat: int = 10, variants=None, seed: int = 0,
          prefetch_rows: int | None = None, index: str = "random", h2d: bool = False) -> dict:
    """Build the table once, then `rounds` rounds: each draws `warmup + repeat` index vectors and times every
    method on them in an order rotated by one per round. Each method is checked byte for byte against
    `index_select` on a fresh index vector before anything is timed.

    `index`: `random` (uniform rows, as the sampler draws), `sequential` (a run of consecutive rows from a
    random start: the same bytes without the random access, a factor for explaining a result) or `random-per-call`
    (uniform rows drawn inside each timed call, before the gather: module docstring).
    `h2d`: also time the H2D right after each gather and once again (module docstring); needs CUDA."""
    import numba
    import torch

    from rlperf.measure.machine import cpu_model, machine_name
    from rlperf.replay import host_gather
    from rlperf.replay.huge_pages import tensor_backing, thp_mode

    if index not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {index!r}; valid: {', '.join(INDEX_KINDS)}")
    prefetch_rows = host_gather.PREFETCH_ROWS if prefetch_rows is None else prefetch_rows
    variants = tuple(host_gather.VARIANTS if variants is None else variants)
    unknown = [v for v in variants if v not in host_gather.VARIANTS]
    if unknown:
        raise ValueError(f"unknown gather variant(s) {unknown}; valid: {', '.join(host_gather.VARIANTS)}")
    rows = 2**capacity_exponent
    if rows < sample_rows:
        raise ValueError(f"a table of 2^{capacity_exponent} = {rows:,} rows is smaller than the {sample_rows:,}-row "
                         f"batch (the contiguous-copy floor copies that many rows); use a capacity exponent >= "
                         f"{(sample_rows - 1).bit_length()}")
    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    table = _table(rows, width)
    build_s = time.perf_counter() - t0
    pinned = torch.cuda.is_available()
    if h2d and not pinned:
        raise ValueError("h2d=True times the copy to the GPU: no CUDA device is visible")
    staging = torch.zeros((sample_rows, width), dtype=torch.float32, pin_memory=pinned)
    copy = _h2d_copy(staging) if h2d else None
    unavailable: dict[str, str] = {}
    methods = _methods(variants, table, staging, threads, prefetch_rows, unavailable)
    names = list(methods)
    gen = torch.Generator().manual_seed(seed)

    def draw():
        if index != "sequential":
            return torch.randint(rows, (sample_rows,), generator=gen)
        start = int(torch.randint(rows - sample_rows + 1, (1,), generator=gen))
        return torch.arange(start, start + sample_rows)

    def draws():
        return [draw() for _ in range(warmup + repeat)]

    parity = {}
    check = draws()[-1]
    want = torch.index_select(table, 0, check)
    for name in names:
        if name == COPY_FLOOR:
            continue
        staging.zero_()
        methods[name](check)
        parity[name] = bool(torch.equal(staging.view(torch.int32), want.view(torch.int32)))
    del want
    if not all(parity.values()):
        raise AssertionError(f"a gather differs from index_select: {parity}")

    per_call = index == "random-per-call"
    call_gen, buf = torch.Generator(), torch.empty(sample_rows, dtype=torch.int64)

    def drawn(idx):
        """The vector a timed call gathers: `idx`, or with `per_call` one drawn now into `buf`, inside the timing."""
        if not per_call:
            return idx
        return torch.randint(rows, (sample_rows,), generator=call_gen, out=buf)

    load_before = _load()
    timings = []
    for rnd in range(rounds):
        idxs = [None] * (warmup + repeat) if per_call else draws()  # per_call draws inside each timed call
        order = names[rnd % len(names):] + names[: rnd % len(names)]
        for name in order:
            torch.set_num_threads(threads)
            numba.set_num_threads(threads)
            call_gen.manual_seed(seed + 1 + rnd)  # per_call: every method of a round draws the same vectors
            ms, after, again = [], [], []
            for i, idx in enumerate(idxs):
                t = time.perf_counter_ns()
                methods[name](drawn(idx))
                t1 = time.perf_counter_ns()
                if copy is not None:
                    copy()
                    t2 = time.perf_counter_ns()
                    copy()
                    t3 = time.perf_counter_ns()
                if i >= warmup:
                    ms.append((t1 - t) / 1e6)
                    if copy is not None:
                        after.append((t2 - t1) / 1e6)
                        again.append((t3 - t2) / 1e6)
            entry = {"round": rnd, "method": name, "position": order.index(name), "ms": ms,
                     "median_ms": statistics.median(ms)}
            if copy is not None:
                entry.update(h2d_ms=after, h2d_again_ms=again, median_h2d_ms=statistics.median(after),
                             median_h2d_again_ms=statistics.median(again),
                             median_total_ms=statistics.median(a + b for a, b in zip(ms, after)))
            timings.append(entry)
    return {"pid": os.getpid(), "started_unix": time.time() - build_s, "argv": sys.argv, "threads": threads,
            "affinity": sorted(os.sched_getaffinity(0)), "machine": machine_name(), "cpu_model": cpu_model(),
            "python": platform.python_version(), "torch": torch.__version__, "numba": numba.__version__,
            "numba_threading_layer": numba.threading_layer(), "thp_mode": thp_mode(),
            "table": {"rows": rows, "width": width, "row_bytes": width * 4, "build_s": build_s,
                      "backing": tensor_backing(table)},
            "staging": {"rows": sample_rows, "pinned": pinned, "bytes": staging.nbytes},
            "index": index, "h2d": h2d, "load_before": load_before, "load_after": _load(),
            "prefetch_rows": prefetch_rows, "rounds": rounds, "warmup": warmup, "repeat": repeat,
            "parity": parity, "unavailable": unavailable, "timings": timings}


def _h2d_copy(staging):
    """The `host` placement's H2D of `staging` (placements.host.HostReplay.h2d), waited for: a callable."""
    import torch

    target = torch.empty_like(staging, device="cuda")
    stream = torch.cuda.Stream()

    def copy():
        with torch.cuda.stream(stream):
            target.copy_(staging, non_blocking=True)
        stream.synchronize()

    copy()  # the first copy sets up the driver's mappings outside any timing
    return copy


def _per_process(rec: dict, key: str = "median_ms") -> dict:
    """Per method: the median of its round medians of `key` and its paired per-round ratios to index_select."""
    rounds: dict[int, dict] = {}
    for t in rec["timings"]:
        rounds.setdefault(t["round"], {})[t["method"]] = t[key]
    out = {}
    for name in rounds[0]:
        ms = [r[name] for r in rounds.values()]
        ratios = [r[name] / r[INDEX_SELECT] for r in rounds.values()]
        out[name] = {"median_ms": statistics.median(ms), "ratio": statistics.median(ratios),
                     "ratio_min": min(ratios), "ratio_max": max(ratios),
                     "rounds_faster": sum(x < 1 for x in ratios), "rounds": len(ratios)}
    return out


def summarize(records: list[dict]) -> str:
    """Markdown: per condition (threads, row bytes, index kind, prefetch distance, the methods timed), per
    method over processes, then per process; never a best cell."""
    gib = 2**30
    lines = []

    def cond(r):  # processes are pooled only when they ran the same condition and the same methods
        methods = tuple(dict.fromkeys(t["method"] for t in r["timings"]))
        return r["threads"], r["table"]["row_bytes"], r.get("index", "random"), r["prefetch_rows"], methods

    for threads, row_bytes, index, ahead, methods in sorted({cond(r) for r in records}):
        recs = [r for r in records if cond(r) == (threads, row_bytes, index, ahead, methods)]
        per = [_per_process(r) for r in recs]
        first = recs[0]
        tb, st = first["table"], first["staging"]
        batch = st["bytes"]
        lines += [f"### {threads} thread(s), {row_bytes:,} B rows, {index} index, prefetch {ahead} rows ahead: "
                  f"{len(recs)} fresh processes",
                  "",
                  f"Table {tb['rows']:,} rows x {tb['row_bytes']:,} B ({tb['rows'] * tb['row_bytes'] / gib:.2f} GiB, "
                  f"THP `{first['thp_mode']}`, huge-page share of the table "
                  + ", ".join(f"{r['table']['backing']['huge_share']:.2f}" for r in recs)
                  + f"); {st['rows']:,} rows a batch ({batch / 2**20:.2f} MiB), staging "
                  + ("pinned" if st["pinned"] else "pageable (no CUDA here)")
                  + f"; affinity {first['affinity']}; Numba threading layer `{first['numba_threading_layer']}`; "
                  f"{first['rounds']} interleaved rounds a process, each method a median of {first['repeat']} "
                  f"gathers after {first['warmup']} warmups; prefetch {first['prefetch_rows']} rows ahead.",
                  "",
                  "| method | median of process medians, ms | min..max ms | GB/s (read+write) | "
                  "paired ratio to index_select: median of processes | min..max of process medians | "
                  "processes faster | rounds faster |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name in per[0]:
            ms = [p[name]["median_ms"] for p in per]
            ratios = [p[name]["ratio"] for p in per]
            med = statistics.median(ms)
            rf = sum(p[name]["rounds_faster"] for p in per)
            rn = sum(p[name]["rounds"] for p in per)
            label = f"{name} (not a gather: floor)" if name == COPY_FLOOR else name
            lines.append(f"| {label} | {med:.2f} | {min(ms):.2f}..{max(ms):.2f} | {2 * batch / med / 1e6:.1f} | "
                         f"{statistics.median(ratios):.3f} | {min(ratios):.3f}..{max(ratios):.3f} | "
                         f"{sum(x < 1 for x in ratios)} of {len(ratios)} | {rf} of {rn} |")
        if all(r.get("h2d") for r in recs):
            lines += _h2d_table(recs)
        gone = {v: why for r in recs for v, why in r.get("unavailable", {}).items()}
        lines += [f"\nNot built on this machine (left out): {v}: {why}" for v, why in gone.items()]
        lines += ["", "Per process (median ms / paired median ratio [min..max over rounds]; the load average "
                  "before it):", "",
                  "| process | load | " + " | ".join(per[0]) + " |", "|---|---|" + "---:|" * len(per[0])]
        for k, (r, p) in enumerate(zip(recs, per), 1):
            load = " ".join((r.get("load_before", {}).get("loadavg") or "?").split()[:3])
            lines.append(f"| {k} | {load} | " + " | ".join(f"{v['median_ms']:.2f} / {v['ratio']:.3f} "
                                                           f"[{v['ratio_min']:.3f}..{v['ratio_max']:.3f}]"
                                                           for v in p.values()) + " |")
        lines.append("")
    return "\n".join(lines)


def _h2d_table(recs: list[dict]) -> list[str]:
    """The gather-then-H2D table of `h2d` records: per method, medians over processes of the process medians."""
    per_total = [_per_process(r, "median_total_ms") for r in recs]
    parts = {key: [_per_process(r, key) for r in recs] for key in ("median_ms", "median_h2d_ms", "median_h2d_again_ms")}
    lines = ["", "Gather then H2D (the `host` placement's CPU sample+H2D): each gather followed by the H2D of its "
             "staging, then the same H2D again; ms, median over processes of the process medians:", "",
             "| method | gather | H2D right after | H2D again | gather + H2D | paired ratio of gather + H2D to "
             "index_select's: median of processes (min..max) | processes faster |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name in per_total[0]:
        med = {key: statistics.median(p[name]["median_ms"] for p in per) for key, per in parts.items()}
        ratios = [p[name]["ratio"] for p in per_total]
        total = statistics.median(p[name]["median_ms"] for p in per_total)
        lines.append(f"| {name} | {med['median_ms']:.2f} | {med['median_h2d_ms']:.2f} | "
                     f"{med['median_h2d_again_ms']:.2f} | {total:.2f} | {statistics.median(ratios):.3f} "
                     f"({min(ratios):.3f}..{max(ratios):.3f}) | {sum(x < 1 for x in ratios)} of {len(ratios)} |")
    return lines


__all__ = ["COPY_FLOOR", "INDEX_SELECT", "probe", "summarize"]
