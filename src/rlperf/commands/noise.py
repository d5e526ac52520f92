"""`rlperf noise`: time actor-noise generation variants (numpy, per-thread numpy, counter-based Numba).

One step of a task's 64 noise columns per env (docs/workloads.md C9), uniform and Gaussian. Writes a versioned
JSON (schema rlperf.noise v1) and a chart side by side; `--plot-only` re-renders the chart from a JSON;
`--json` prints a one-object summary. All input is validated before anything is measured or written.
Exit codes: 0 ok, 1 the counter generator drew different values at different thread counts, 2 bad input.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from rlperf.commands.args import (add_plot_only_flags, at_least, only_with_plot_only, parse_positive_list,
                                  threads_in_reach, writable_file)
from rlperf.errors import UsageError, choice_error

SCHEMA, VERSION = "rlperf.noise", 1


def add_parser(subparsers, name: str, help_text: str) -> None:
    from rlperf.envs.noise import cases

    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default="g1_motion_tracking",
                   help=f"whose noise columns and scales: one of {', '.join(cases.TASKS)} (default g1_motion_tracking)")
    p.add_argument("--variants", help=f"comma-separated, default all: {', '.join(cases.VARIANTS)}")
    p.add_argument("--dists", help="comma-separated: uniform,normal (default both)")
    p.add_argument("--num-envs", help="comma-separated env counts (default 1024,...,32768)")
    p.add_argument("--threads", help="comma-separated thread counts (default 1,2,4,... up to the machine); "
                                     "single-threaded variants run at 1 only; the rest are recorded as skipped")
    p.add_argument("--iters", type=int, help="timed calls per case (default 20; quick 5)")
    p.add_argument("--warmup", type=int, help="untimed calls per case (default 5; quick 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic inputs and samplers (the same seed gives the same inputs)")
    p.add_argument("--out-json", help="result path (default out/noise/<task>/results.json); chart next to it")
    p.add_argument("--plot-only", metavar="PATH", help="re-render the chart from an existing JSON")
    add_plot_only_flags(p, "noise")
    p.add_argument("--json", action="store_true", help="print a one-object JSON summary to stdout")
    p.add_argument("--quick", action="store_true", help="envs 1024,8192, threads 1,2, iters 5, warmup 1")


def _names(text: str | None, what: str, valid: tuple[str, ...]) -> list[str]:
    if text is None:
        return list(valid)
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise UsageError(f"{what}: empty list; valid: {', '.join(valid)}")
    for name in names:
        if name not in valid:
            raise choice_error(what, name, valid)
    return names


def _plan(args) -> dict:
    """Validated settings; raises UsageError before anything runs or is written."""
    from rlperf.envs import cases as env_cases
    from rlperf.envs import threads
    from rlperf.envs.noise import cases

    only_with_plot_only(args)
    if args.task not in cases.PROFILES:
        raise choice_error("task", args.task, cases.TASKS)
    variants = _names(args.variants, "--variants", cases.VARIANTS)
    dists = _names(args.dists, "--dists", cases.DISTS)
    cap = threads.max_numba_threads()
    if args.threads:
        requested = sorted(parse_positive_list(args.threads, "--threads"))
    else:
        requested = list(cases.QUICK_THREADS) if args.quick else list(env_cases.thread_sweep(cap))
    if args.num_envs:
        num_envs = sorted(parse_positive_list(args.num_envs, "--num-envs"))
    else:
        num_envs = list(cases.QUICK_NUM_ENVS if args.quick else cases.NUM_ENVS)
    iters = at_least("--iters", args.iters if args.iters is not None else
                     (cases.QUICK_ITERS if args.quick else cases.ITERS), 1)
    warmup = at_least("--warmup", args.warmup if args.warmup is not None else
                      (cases.QUICK_WARMUP if args.quick else cases.WARMUP), 0)
    out = Path(args.out_json or f"out/noise/{args.task}/results.json")
    writable_file(out, "--out-json")
    threads_in_reach(requested, cap)
    _fits_in_memory(args.task, max(num_envs))
    return dict(variants=variants, dists=dists, num_envs=num_envs, requested=requested, cap=cap,
                iters=iters, warmup=warmup, out=out)


BYTES_PER_VALUE = 20  # the numpy variant: a float64 draw, its float32 copy, the scaled product and the output


def _fits_in_memory(task: str, num_envs: int) -> None:
    """Refuse an env count whose noise buffers the host cannot hold (exit 2 naming the bytes) before allocating."""
    from rlperf.envs.noise import cases
    from rlperf.measure.guards import require_host

    width = cases.PROFILES[task].width
    require_host(num_envs * width * BYTES_PER_VALUE,
                 f"{num_envs:,} envs x {width} noise columns x {BYTES_PER_VALUE} B", "--num-envs")


def _measure(args, plan: dict) -> dict:
    from tqdm import tqdm

    from rlperf.envs import threads
    from rlperf.envs.harness import now_utc
    from rlperf.envs.noise import cases, measure
    from rlperf.measure.machine import machine_identity, one_line

    load_start = os.getloadavg()
    threading_info = threads.prepare_numba()
    todo = cases.enumerate_cases(args.task, plan["variants"], plan["dists"], plan["num_envs"], plan["requested"])
    run = [c for c in todo if cases.skip_reason(c.variant, c.threads, plan["cap"]) is None]
    skipped = [{"variant": c.variant, "dist": c.dist, "num_envs": c.num_envs, "threads": c.threads,
                "reason": cases.skip_reason(c.variant, c.threads, plan["cap"])}
               for c in todo if cases.skip_reason(c.variant, c.threads, plan["cap"]) is not None]
    width = cases.PROFILES[args.task].width
    results = []
    for case in tqdm(run, desc=f"rlperf noise {args.task}", unit="case", file=sys.stderr, leave=False):
        samples = measure.time_case(case, iters=plan["iters"], warmup=plan["warmup"], seed=args.seed)
        results.append(measure.record(case, samples, width))
    measure.add_speedups(results)
    counter_threads = sorted({c.threads for c in run if c.variant == "counter-numba"})
    independence = {}
    if len(counter_threads) > 1:
        for dist in plan["dists"]:
            independence[dist] = measure.counter_thread_independent(args.task, dist, 4099, counter_threads,
                                                                    args.seed)
    ident = machine_identity()
    meta = {
        "timestamp_utc": now_utc(), "command": "rlperf " + shlex.join(sys.argv[1:]), "task": args.task,
        "fields": [list(f) for f in cases.PROFILES[args.task].fields], "width": width,
        "variants": plan["variants"], "variant_help": {v: cases.VARIANT_HELP[v] for v in plan["variants"]},
        "dists": plan["dists"], "num_envs": plan["num_envs"], "requested_threads": plan["requested"],
        "numba_max_threads": plan["cap"], "iters": plan["iters"], "warmup": plan["warmup"], "seed": args.seed,
        "threading": threading_info, "threading_layer": threads.threading_layer(),
        "machine": ident, "device_line": one_line(ident),
        "loadavg_start": [round(x, 2) for x in load_start], "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "timing": "perf_counter wall clock per fill of one step, warm-up discarded; speedups from medians",
    }
    return {"schema": SCHEMA, "schema_version": VERSION, "meta": meta, "results": results, "skipped": skipped,
            "counter_thread_independent": {"threads": counter_threads, "by_dist": independence}}


SHAPE = {"meta": dict, "results": list}  # what --plot-only needs of a saved document


def _reports(doc: dict, folder: Path) -> None:
    """The chart for `doc` into `folder`; the document names it under `plots`."""
    from rlperf.report.noise_charts import CHART_NAME, plot_noise

    chart = CHART_NAME.format(task=doc["meta"]["task"])
    doc["plots"] = {"summary": chart}
    plot_noise(doc, folder / chart)


def _measured(args) -> tuple[dict, Path]:
    plan = _plan(args)
    return _measure(args, plan), plan["out"]


def _ok(doc: dict) -> bool:
    return all(doc.get("counter_thread_independent", {}).get("by_dist", {}).values())


def _print_table(doc: dict, paths: dict) -> None:
    from rlperf.report.tables import markdown_table

    print(f"noise {doc['meta']['task']} | {doc['meta']['device_line']} | layer {doc['meta']['threading_layer']}")
    rows = [[r["dist"], r["variant"], r["num_envs"], r["threads"], f"{r['median_ms']:.3f}", f"{r['ns_per_value']:.2f}",
             None if r["speedup_vs_numpy"] is None else f"{r['speedup_vs_numpy']:.2f}"] for r in doc["results"]]
    print("\n".join(markdown_table(["dist", "variant", "envs", "thr", "median ms", "ns/value", "vs numpy"], rows,
                                   align="llrrrrr")))
    for s in doc["skipped"]:
        print(f"skipped {s['variant']}/{s['dist']}/{s['num_envs']}/{s['threads']}t: {s['reason']}")
    ind = doc.get("counter_thread_independent", {})
    if ind.get("by_dist"):
        print(f"counter-numba identical for threads {ind['threads']}: {ind['by_dist']}")
    print("wrote " + ", ".join(v for v in paths.values() if v))


def run(args) -> int:
    from rlperf.commands.outputs import measure_or_replot

    doc, out_json, folder = measure_or_replot(args, "noise", schema=SCHEMA, version=VERSION, shape=SHAPE,
                                              reports=_reports, measure=lambda: _measured(args))
    paths = {"json": str(out_json) if out_json else None, "chart": str(folder / doc["plots"]["summary"])}
    if args.json:
        keep = ("variant", "dist", "num_envs", "threads", "median_ms", "ns_per_value", "speedup_vs_numpy")
        print(json.dumps({"schema": "rlperf.noise.summary", "task": doc["meta"]["task"], "outputs": paths,
                          "cases": [{k: r[k] for k in keep} for r in doc["results"]], "skipped": doc["skipped"],
                          "counter_thread_independent": doc.get("counter_thread_independent"), "ok": _ok(doc)}))
    else:
        _print_table(doc, paths)
    return 0 if _ok(doc) else 1
