"""Why host-compact's CPU gather is bimodal: fresh processes, each timed the benchmark's way, with its memory state.

    taskset -c 1 .venv/bin/python scripts/host_compact_bimodality.py --out DIR [--rounds 20] [--forced-rounds 10]
        [--conditions base,heap,mmap,small-pages,hashseed] [--core 1] [--src SRC_DIR --label LABEL]

Each round starts one fresh process per condition, pinned to `--core` (so torch runs 1 thread, as the suite
does there), conditions interleaved so a drift of the host hits them all alike. A process times
`bench_replay.ReplayCpuSample.track_ms(20, 'host-compact', 1)` through the benchmark's own functions
(`_feasible_case`, `_set_up`, `measure(cpu_sample, warmup=5, repeat=20)`), and records with it:

- minor page faults per timed call (all 25 calls, and 10 more calls one by one beside their ms);
- the backing of the table, the terminal table, the slot index and the staging (`replay.huge_pages.
  tensor_backing`: bytes in 2 MiB pages, base address mod 2 MiB);
- glibc's heap state after the calls (`measure.memstate.malloc_info`), the CPU's MHz, torch's threads;
- and, in `base` processes, the packed fp32 `host` gather the same way, in the same process after it.

The parent records free order>=9 blocks (/proc/buddyinfo) and the load average before each process.
Conditions (each forces one factor; `base` is none):

- `base`: as the benchmark runs;
- `heap`: glibc's mmap threshold fixed at 32 MiB and trimming off (GLIBC_TUNABLES): the gather's ~32 MB
  temporaries come from the heap and are reused, the 1 GiB table and 64 MiB prefill chunks still mmap;
- `mmap`: the mmap threshold fixed at 128 KiB: every temporary is a fresh mapping, faulted on each call;
- `small-pages`: the table advised MADV_NOHUGEPAGE instead of MADV_HUGEPAGE (4 KiB pages);
- `hashseed`: PYTHONHASHSEED = round mod 5, to see whether the process's mode follows the hash seed.

`--src` runs another checkout's `src` (e.g. `git archive COMMIT | tar -x -C DIR`) under today's
benchmarks, as the history does; the probe modules are loaded from this checkout by path.
Writes DIR/runs.jsonl (one line per process), DIR/results.json (runs, machine, command, times, load) and
DIR/summary.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POINT = (20, "host-compact", 1)
PACKED = (20, "host", 1)
PROBE_CALLS = 10
TUNABLES = {
    "heap": "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=68719476736",
    "mmap": "glibc.malloc.mmap_threshold=131072",
}
CONDITIONS = ("base", "heap", "mmap", "small-pages", "hashseed")
SLOW_FAULTS = 1000  # minor faults per timed call that mark a process as faulting inside the gather


def _load(name: str, rel: str):
    """A standalone module of this checkout by path (the `--src` checkout may not have it)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _timed_point(bench, point, pages, mem) -> tuple[object, dict]:
    """Set up `point` as the benchmark does, time it as track_ms does, and record faults and page state."""
    from rlperf.replay.metrics import CPU_SAMPLE

    case = bench._feasible_case(*point, device_timing=False)
    t0 = time.perf_counter()
    placement = bench._set_up(case, point[2])
    setup_s = time.perf_counter() - t0
    f0 = mem.minor_faults()
    samples = placement.measure(CPU_SAMPLE, warmup=bench.WARMUP, repeat=bench.REPEAT)
    calls = bench.WARMUP + bench.REPEAT
    faults = (mem.minor_faults() - f0) / calls
    probe = []
    for _ in range(PROBE_CALLS):
        f, t = mem.minor_faults(), time.perf_counter_ns()
        placement.cpu_sample()
        probe.append({"ms": (time.perf_counter_ns() - t) / 1e6, "faults": mem.minor_faults() - f})
    st = placement.storage
    tensors = {"table": st.table, "staging": placement.staging}
    if getattr(st.layout, "elide_next", False):
        tensors.update(terminal=st.terminal, slot_of_row=st.slot_of_row)
    return placement, {"median_ms": statistics.median(samples), "samples_ms": samples, "setup_s": setup_s,
                       "faults_per_call": faults, "probe": probe,
                       "backing": {k: pages.tensor_backing(t) for k, t in tensors.items()},
                       "huge_pages_flag": getattr(st, "huge_pages", None)}


def child(condition: str, src: str | None, core: int) -> dict:
    """One fresh process: the benchmark's point, its memory state, and (base) the packed gather after it."""
    pages = _load("_probe_huge_pages", "src/rlperf/replay/huge_pages.py")
    mem = _load("_probe_memstate", "src/rlperf/measure/memstate.py")
    sys.path[:0] = ([str(Path(src) / "src")] if src else []) + [str(ROOT)]
    if condition == "small-pages":
        import rlperf.replay.storage as storage

        storage.advise_huge_pages = lambda address, nbytes: pages.advise_huge_pages(address, nbytes, huge=False)
    import torch

    from benchmarks import bench_replay as bench

    placement, compact = _timed_point(bench, POINT, pages, mem)
    out = {"condition": condition, "pid": os.getpid(), "torch_threads": torch.get_num_threads(),
           "rlperf_file": sys.modules["rlperf"].__file__, "compact": compact, "malloc": mem.malloc_info(),
           "cpu_mhz": mem.cpu_mhz(core), "thp_mode": pages.thp_mode(),
           "hashseed": os.environ.get("PYTHONHASHSEED")}
    del placement
    if condition == "base":
        out["packed"] = _timed_point(bench, PACKED, pages, mem)[1]
    return out


def _buddy_and_load(mem) -> dict:
    return {"free_order9_blocks": mem.free_blocks(9), "loadavg": list(os.getloadavg()), "utc": _utc()}


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _schedule(conditions, rounds: int, forced_rounds: int) -> list[tuple[int, str]]:
    return [(r, c) for r in range(max(rounds, forced_rounds)) for c in conditions
            if r < (rounds if c == "base" else forced_rounds)]


def _spawn(condition: str, rnd: int, args) -> dict:
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if condition in TUNABLES:
        env["GLIBC_TUNABLES"] = TUNABLES[condition]
    if condition == "hashseed":
        env["PYTHONHASHSEED"] = str(rnd % 5)
    cmd = ["taskset", "-c", str(args.core), sys.executable, str(Path(__file__).resolve()), "--child", condition,
           "--core", str(args.core)] + (["--src", args.src] if args.src else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    if proc.returncode:
        return {"condition": condition, "error": (proc.stderr or proc.stdout)[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(run: dict) -> str:
    c, tb, packed = run["compact"], run["compact"]["backing"]["table"], run.get("packed")
    probe = ", ".join(f"{p['ms']:.0f}/{p['faults']}" for p in c["probe"][:3])
    host = f"{packed['median_ms']:.1f} | {packed['faults_per_call']:.0f}" if packed else "- | -"
    return (f"| {run['round']} | {run['condition']} | {c['median_ms']:.1f} | {c['faults_per_call']:.0f} | {probe} | "
            f"{tb['huge_share'] or 0:.3f} | {tb['offset_in_huge_page']} | {run['before']['free_order9_blocks']} | "
            f"{run['cpu_mhz']} | {run['before']['loadavg'][0]:.2f} | {host} |")


def summary(doc: dict) -> str:
    runs = [r for r in doc["runs"] if "compact" in r]
    lines = [f"# host-compact CPU gather, fresh processes ({doc['label']})", "",
             f"`bench_replay.ReplayCpuSample.track_ms{POINT}` set up and timed through the benchmark's own "
             f"functions, one fresh process each, pinned to CPU {doc['core']}; {doc['started']} to {doc['ended']}; "
             f"load average {doc['load_start'][0]:.2f} at start, {doc['load_end'][0]:.2f} at end; machine "
             f"`{doc['machine'].get('name', '?')}`. Command: `{doc['command']}`.", "",
             "| condition | processes | median ms, min..max | faults per call, min..max | processes faulting "
             f"(> {SLOW_FAULTS}/call) | their median ms | the others' median ms | table huge share, min..max |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for cond in doc["conditions"]:
        rs = [r for r in runs if r["condition"] == cond]
        if not rs:
            continue
        ms = [r["compact"]["median_ms"] for r in rs]
        fl = [r["compact"]["faults_per_call"] for r in rs]
        hs = [r["compact"]["backing"]["table"]["huge_share"] or 0 for r in rs]
        slow = [r["compact"]["median_ms"] for r in rs if r["compact"]["faults_per_call"] > SLOW_FAULTS]
        fast = [r["compact"]["median_ms"] for r in rs if r["compact"]["faults_per_call"] <= SLOW_FAULTS]
        med = (lambda xs: f"{statistics.median(xs):.1f}" if xs else "-")
        lines.append(f"| {cond} | {len(rs)} | {statistics.median(ms):.1f}, {min(ms):.1f}..{max(ms):.1f} | "
                     f"{min(fl):.0f}..{max(fl):.0f} | {len(slow)} | {med(slow)} | {med(fast)} | "
                     f"{min(hs):.3f}..{max(hs):.3f} |")
    packed = [r["packed"]["median_ms"] for r in runs if r.get("packed")]
    if packed:
        lines += ["", f"Packed fp32 `host` in the base processes (after host-compact, same process): median "
                  f"{statistics.median(packed):.1f} ms, {min(packed):.1f}..{max(packed):.1f}, faults per call "
                  f"{min(r['packed']['faults_per_call'] for r in runs if r.get('packed')):.0f}.."
                  f"{max(r['packed']['faults_per_call'] for r in runs if r.get('packed')):.0f}."]
    errors = [r for r in doc["runs"] if "error" in r]
    if errors:
        lines += ["", f"{len(errors)} process(es) failed; their stderr is in results.json."]
    lines += ["", "Per process (probe: the first 3 of 10 extra calls as ms/faults; huge share and offset of the "
              "table; free order>=9 blocks before the process):", "",
              "| round | condition | median ms | faults/call | probe ms/faults | table huge share | table offset "
              "mod 2 MiB | free order>=9 | CPU MHz | load | host ms | host faults/call |",
              "|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [_row(r) for r in runs]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rounds", type=int, default=20, help="base processes")
    ap.add_argument("--forced-rounds", type=int, default=10, help="processes of each other condition")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--src", help="another checkout whose src is measured (default: this one)")
    ap.add_argument("--label", default="this checkout")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.src, args.core)))
        return 0
    conditions = [c for c in args.conditions.split(",") if c]
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions or args.out is None or args.rounds < 0 or args.forced_rounds < 0:
        print(f"error: --out DIR is required and --conditions takes a comma list of {', '.join(CONDITIONS)} "
              f"(got {', '.join(bad) or args.conditions!r})", file=sys.stderr)
        return 2
    if args.out.exists():
        print(f"error: {args.out} exists; give a new folder", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT / "src"))
    from rlperf.atomic import write_json, write_text
    from rlperf.measure import memstate

    started, load_start, runs = _utc(), list(os.getloadavg()), []
    for rnd, cond in _schedule(conditions, args.rounds, args.forced_rounds):
        before = _buddy_and_load(memstate)
        run = {"round": rnd, **_spawn(cond, rnd, args), "before": before}
        runs.append(run)
        c = run.get("compact")
        print(json.dumps({"round": rnd, "condition": cond, "ms": c and round(c["median_ms"], 2),
                          "faults": c and round(c["faults_per_call"]), "error": run.get("error", "")[-300:]}),
              flush=True)
    machine = json.loads(subprocess.run([sys.executable, "-m", "rlperf", "machine", "--json"], capture_output=True,
                                        text=True, cwd=ROOT, check=True).stdout)
    doc = {"label": args.label, "src": args.src or str(ROOT), "core": args.core, "conditions": conditions,
           "command": " ".join([Path(sys.executable).name, *sys.argv]), "started": started, "ended": _utc(),
           "load_start": load_start, "load_end": list(os.getloadavg()), "machine": machine,
           "tunables": TUNABLES, "runs": runs}
    args.out.mkdir(parents=True)
    write_text(args.out / "runs.jsonl", "".join(json.dumps(r) + "\n" for r in runs))
    write_json(args.out / "results.json", doc)
    write_text(args.out / "summary.md", summary(doc))
    print(f"wrote {args.out}/summary.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
