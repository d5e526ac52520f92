"""Where does the host path's time go against the reference's? One factor at a time, interleaved, one process.

    python3 scripts/device/probe_host_gather.py --out probe-host.jsonl [--capacity-exponent 20] [--rounds 5]
    python3 scripts/device/probe_host_gather.py --summarize probe-host.jsonl   # the Markdown table

The reference's CPU sample (docs/workloads.md A8: randint into a preallocated index, index_select(out=)
into pinned staging) is timed on variants that change one factor each, interleaved round by round so a
drift of the host's speed hits them all alike:

- `table`: the reference's plain torch table (4 KiB pages under THP `madvise`) or rlperf's host table
  advised for huge pages before its first write (`replay.huge_pages`);
- `threads`: torch's intra-op threads, cpu_count (the reference's `auto`) or half of it;
- `staging`: pinned (the reference) or pageable;
- `caller`: the main thread, or a worker thread as the reference harness calls it (ThreadPoolExecutor).

One JSON line per variant and round: the median of 20 timed gathers after 5 warmups (ms), and the
mapping flags of its table (THPeligible, AnonHugePages bytes from /proc/self/smaps), the THP mode.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

WIDTH, SAMPLE_ROWS = 930, 32768  # the motion-tracking packed row, one learner iteration


def _table(rows: int, huge: bool):
    import torch

    from rlperf.replay.huge_pages import advise_huge_pages
    from rlperf.replay.tables import fill_pattern_

    t = torch.empty((rows, WIDTH), dtype=torch.float32)
    if huge:
        advise_huge_pages(t.data_ptr(), t.nbytes)
    return fill_pattern_(t)


def _time(fn, warmup: int = 5, repeat: int = 20) -> float:
    out = []
    for i in range(warmup + repeat):
        t0 = time.perf_counter_ns()
        fn()
        if i >= warmup:
            out.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(out)


def summarize(path: str) -> None:
    """Per variant: the median over rounds of its round medians, min..max, its ratio to the reference's, and
    the median of its per-round ratio to the reference (paired: a round's drift of the host cancels)."""
    lines = [json.loads(line) for line in open(path)]
    keys = ("table", "threads", "staging", "caller")
    by, rounds = {}, {}
    for line in lines:
        by.setdefault(tuple(line[k] for k in keys), []).append(line["cpu_sample_ms"])
        rounds.setdefault(line["round"], {})[tuple(line[k] for k in keys)] = line["cpu_sample_ms"]
    ref_key = next(iter(by))
    ref = statistics.median(by[ref_key])
    first = lines[0]
    print(f"CPU sample of {first['rows']:,} rows x {WIDTH} fp32, {SAMPLE_ROWS:,} rows drawn; THP mode "
          f"{first['thp_mode']}; {len(by[next(iter(by))])} interleaved rounds, each a median of 20 gathers.\n")
    print("| table | threads | staging | caller | median ms | min..max ms | / reference | paired per round |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for key, ms in by.items():
        pairs = [r[key] / r[ref_key] for r in rounds.values() if key in r and ref_key in r]
        print(f"| {' | '.join(map(str, key))} | {statistics.median(ms):.3f} | {min(ms):.3f}..{max(ms):.3f} | "
              f"{statistics.median(ms) / ref:.3f} | {statistics.median(pairs):.3f} |")
    flags = {line["table"]: line["table_flags"] for line in lines}
    print("\nTable mappings: " + "; ".join(f"{k}: {v}" for k, v in flags.items()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--summarize", metavar="JSONL")
    ap.add_argument("--capacity-exponent", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    if not args.out:
        ap.error("--out or --summarize is required")
    import torch

    from rlperf.replay.huge_pages import mapping_flags, thp_mode

    rows, cores = 2**args.capacity_exponent, os.cpu_count() or 1
    tables = {"plain": _table(rows, False), "huge": _table(rows, True)}
    idx = torch.empty(SAMPLE_ROWS, dtype=torch.int64)
    gen = torch.Generator().manual_seed(12345)
    staging = {"pinned": torch.zeros((SAMPLE_ROWS, WIDTH), pin_memory=torch.cuda.is_available()),
               "pageable": torch.zeros((SAMPLE_ROWS, WIDTH))}
    pool = ThreadPoolExecutor(max_workers=1)
    variants = [dict(table="plain", threads=cores, staging="pinned", caller="main"),
                dict(table="huge", threads=cores, staging="pinned", caller="main"),
                dict(table="plain", threads=cores // 2, staging="pinned", caller="main"),
                dict(table="huge", threads=cores // 2, staging="pinned", caller="main"),
                dict(table="plain", threads=cores, staging="pageable", caller="main"),
                dict(table="plain", threads=cores, staging="pinned", caller="worker")]
    flags = {k: mapping_flags(t[rows // 2].data_ptr()) for k, t in tables.items()}
    with open(args.out, "w") as fh:
        for rnd in range(args.rounds):
            for v in variants:
                table, out = tables[v["table"]], staging[v["staging"]]

                def gather():
                    torch.randint(rows, (SAMPLE_ROWS,), generator=gen, out=idx)
                    torch.index_select(table, 0, idx, out=out)

                def timed():
                    torch.set_num_threads(v["threads"])
                    return _time(gather)

                ms = pool.submit(timed).result() if v["caller"] == "worker" else timed()
                line = {"round": rnd, **v, "cpu_sample_ms": ms, "rows": rows, "thp_mode": thp_mode(),
                        "table_flags": flags[v["table"]]}
                fh.write(json.dumps(line) + "\n")
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
