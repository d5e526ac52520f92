"""`rlperf env`: time fused Numba update_state kernels against their numpy references, with parity.

Writes a versioned JSON (schema rlperf.env v1), a summary chart and report.md side by side; `--json`
prints a one-object summary to stdout. All input is validated before anything is measured or written.
Exit codes: 0 all cases ran with parity ok, 1 a parity failure, 2 bad input.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path

from rlperf.commands.args import (add_plot_only_flags, at_least, only_with_plot_only, parse_positive_list,
                                  threads_in_reach, writable_file)
from rlperf.errors import UsageError

SCHEMA, VERSION = "rlperf.env", 1


def add_parser(subparsers, name: str, help_text: str) -> None:
    from rlperf.envs.registry import TASKS

    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default="g1_walk_flat", help=f"one of {', '.join(TASKS)} (default g1_walk_flat)")
    p.add_argument("--profiles", help="comma-separated profiles of the task (default: the task's default; "
                                      "sac_default for walk and motion tracking)")
    p.add_argument("--num-envs", help="comma-separated env counts (default 512,...,32768)")
    p.add_argument("--threads", help="comma-separated Numba thread counts (default 1,2,4,... up to the "
                                     "machine); counts above the machine are recorded as skipped")
    p.add_argument("--iters", type=int, help="timed calls per case (default 80; quick 10)")
    p.add_argument("--warmup", type=int, help="untimed calls per case (default 8; quick 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic inputs and samplers (the same seed gives the same inputs)")
    p.add_argument("--out-json", default=None, help="result path (default out/env/<task>/results.json); "
                                                    "the chart and report.md go next to it")
    p.add_argument("--plot-only", metavar="PATH", help="re-render chart and report.md from an existing JSON")
    add_plot_only_flags(p, "env")
    p.add_argument("--json", action="store_true", help="print a one-object JSON summary to stdout")
    p.add_argument("--quick", action="store_true", help="sac_default, envs 512,2048, threads 1 and all of the machine's, iters 10, "
                                                        "warmup 2 (explicit flags still win)")


def _plan(args) -> dict:
    """Validated settings; raises UsageError before anything runs."""
    from rlperf.envs import cases, registry, threads

    only_with_plot_only(args)
    workload = registry.get(args.task)
    sweep = cases.QUICK if args.quick else cases.FULL
    if args.profiles:
        profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
        if not profiles:
            raise UsageError(f"--profiles: empty list; valid: {', '.join(workload.profiles)}")
        registry.check_profiles(workload, profiles)
    elif sweep.profiles and all(p in workload.profiles for p in sweep.profiles):
        profiles = list(sweep.profiles)
    else:
        profiles = [registry.default_profile(workload)]
    cap = threads.max_numba_threads()
    requested = sorted(parse_positive_list(args.threads, "--threads")) if args.threads else (
        list(cases.quick_threads(cap)) if args.quick else list(cases.thread_sweep(cap)))
    num_envs = sorted(parse_positive_list(args.num_envs, "--num-envs")) if args.num_envs else list(sweep.num_envs)
    iters = at_least("--iters", args.iters if args.iters is not None else sweep.iters, 1)
    warmup = at_least("--warmup", args.warmup if args.warmup is not None else sweep.warmup, 0)
    out = Path(args.out_json or f"out/env/{args.task}/results.json")
    writable_file(out, "--out-json")
    threads_in_reach(requested, cap)
    _fits_in_memory(workload, profiles, max(num_envs), args.seed)
    return dict(workload=workload, profiles=profiles, num_envs=num_envs, requested=requested, cap=cap,
                iters=iters, warmup=warmup, out=out)


PROBE_ENVS = 64
OUTPUT_FACTOR = 2  # the numpy and Numba outputs come on top of the two input sets, about as large again


def _fits_in_memory(workload, profiles: list[str], num_envs: int, seed: int) -> None:
    """Refuse an env count whose arrays the host cannot hold (exit 2 naming the bytes) before allocating:
    the inputs are built at PROBE_ENVS envs, measured and scaled."""
    from rlperf.envs import parity
    from rlperf.measure.guards import nbytes, require_host

    inputs = max(nbytes(workload.make_inputs(PROBE_ENVS, p, seed=seed))
                 + nbytes(parity.make_parity_inputs(workload, PROBE_ENVS, p, seed=seed)) for p in profiles)
    per_env = OUTPUT_FACTOR * inputs / PROBE_ENVS  # timed + parity inputs, measured, and the outputs
    require_host(int(per_env * num_envs), f"{num_envs:,} envs of {workload.name} (~{per_env:,.0f} B per env)",
                 "--num-envs")


def _measure(args, plan: dict) -> dict:
    from tqdm import tqdm

    from rlperf.envs import cases, harness, parity
    from rlperf.measure.load import busy_warning
    from rlperf.measure.machine import machine_identity, one_line

    load_start = os.getloadavg()
    warning = busy_warning(load=load_start[0])
    if warning:
        print(f"rlperf env: warning: {warning}", file=sys.stderr, flush=True)
    prepared = harness.prepare(args.task)
    w = prepared.workload
    run_threads = [t for t in plan["requested"] if cases.skip_reason(t, plan["cap"]) is None]
    skipped = [{"profile": p, "num_envs": n, "threads": t, "reason": cases.skip_reason(t, plan["cap"])}
               for p in plan["profiles"] for n in plan["num_envs"] for t in plan["requested"]
               if t not in run_threads]
    todo = cases.enumerate_cases(args.task, plan["profiles"], plan["num_envs"], run_threads)
    results, numpy_cache = [], {}
    for case in tqdm(todo, desc=f"rlperf env {args.task}", unit="case", file=sys.stderr, leave=False):
        key = (case.profile, case.num_envs)
        if key not in numpy_cache:  # numpy timing and inputs are per (profile, envs), shared by thread counts
            timed = w.make_inputs(case.num_envs, case.profile, seed=args.seed, noise_level=1.0)
            parity_inputs = parity.make_parity_inputs(w, case.num_envs, case.profile, seed=args.seed)
            samples = harness.time_reference(w, timed, iters=plan["iters"], warmup=plan["warmup"])
            numpy_cache = {key: (timed, parity_inputs, samples)}  # keep one point's arrays alive
        timed, parity_inputs, samples = numpy_cache[key]
        results.append(harness.measure_case(prepared, case, iters=plan["iters"], warmup=plan["warmup"],
                                            seed=args.seed, numpy_samples=samples, timed_inputs=timed,
                                            parity_inputs=parity_inputs))
    harness.derive_parallel(results)
    ident = machine_identity()
    meta = {
        "timestamp_utc": harness.now_utc(), "command": "rlperf " + shlex.join(sys.argv[1:]),
        "task": args.task, "profiles": plan["profiles"],
        "scope": {p: (w.scope(p) if hasattr(w, "scope") else "update_state") for p in plan["profiles"]},
        "num_envs": plan["num_envs"], "requested_threads": plan["requested"], "measured_threads": run_threads,
        "skipped_threads": [t for t in plan["requested"] if t not in run_threads],
        "numba_max_threads": plan["cap"], "iters": plan["iters"], "warmup": plan["warmup"], "seed": args.seed,
        "threading_layer": prepared.threading["threading_layer"], "threading": prepared.threading,
        "compile_ms": prepared.compile_ms, "compile_source": prepared.compile_source,
        "tolerances": dataclasses.asdict(w.tolerances),
        "bytes_per_env": getattr(w, "bytes_per_env", None),
        "machine": ident, "device_line": one_line(ident),
        "loadavg_start": [round(x, 2) for x in load_start], "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "timing": "perf_counter wall clock per call, warm-up discarded; ratios from medians",
    }
    return {"schema": SCHEMA, "schema_version": VERSION, "meta": meta, "results": results, "skipped": skipped,
            "parity": {f"{r['profile']}:{r['num_envs']}:{r['threads']}": r["parity"] for r in results}}


SHAPE = {"meta": dict, "results": list}  # what --plot-only needs of a saved document


def _reports(doc: dict, folder: Path) -> None:
    """The chart and report.md for `doc` into `folder`; the document names them under `plots`."""
    from rlperf.atomic import write_text
    from rlperf.report.env_charts import CHART_NAME, plot_env
    from rlperf.report.env_markdown import render

    chart = CHART_NAME.format(task=doc["meta"]["task"])
    text = render(doc, chart)
    doc["plots"] = {"summary": chart, "report": "report.md"}
    plot_env(doc, folder / chart)
    write_text(folder / "report.md", text)


def _measured(args) -> tuple[dict, Path]:
    plan = _plan(args)
    return _measure(args, plan), plan["out"]


def _summary(doc: dict, paths: dict) -> dict:
    keep = ("task", "profile", "num_envs", "threads", "numpy_ms", "numba_ms", "parallel_efficiency", "parity_ok")
    return {
        "schema": "rlperf.env.summary", "task": doc["meta"]["task"], "machine": doc["meta"]["machine"]["name"],
        "threading_layer": doc["meta"]["threading_layer"], "compile_ms": doc["meta"]["compile_ms"],
        "outputs": paths,
        "cases": [{**{k: r[k] for k in keep}, "speedup": r["speedup_vs_numpy"]} for r in doc["results"]],
        "skipped": doc["skipped"],
        "parity_ok": all(r["parity_ok"] for r in doc["results"]),
    }


def _print_table(doc: dict, paths: dict) -> None:
    from rlperf.report.tables import markdown_table

    print(f"{doc['meta']['task']} | {doc['meta']['device_line']} | layer {doc['meta']['threading_layer']} | "
          f"compile {doc['meta']['compile_ms']:.0f} ms ({doc['meta']['compile_source']})")
    rows = [[r["profile"], r["num_envs"], r["threads"], f"{r['numpy_ms']:.3f}", f"{r['numba_ms']:.3f}",
             f"{r['speedup_vs_numpy']:.2f}",
             None if r["parallel_efficiency"] is None else f"{r['parallel_efficiency']:.0%}",
             "ok" if r["parity_ok"] else "FAIL"] for r in doc["results"]]
    print("\n".join(markdown_table(["profile", "envs", "thr", "numpy ms", "numba ms", "speedup", "eff", "parity"],
                                   rows, align="lrrrrrrl")))
    for s in doc["skipped"]:
        print(f"skipped {s['profile']}/{s['num_envs']}/{s['threads']}t: {s['reason']}")
    print("wrote " + ", ".join(v for v in paths.values() if v))


def run(args) -> int:
    from rlperf.commands.outputs import measure_or_replot

    doc, out_json, folder = measure_or_replot(args, "env", schema=SCHEMA, version=VERSION, shape=SHAPE,
                                              reports=_reports, measure=lambda: _measured(args))
    paths = {"json": str(out_json) if out_json else None, "chart": str(folder / doc["plots"]["summary"]),
             "report": str(folder / doc["plots"]["report"])}
    if args.json:
        print(json.dumps(_summary(doc, paths)))
    else:
        _print_table(doc, paths)
    return 0 if all(r["parity_ok"] for r in doc["results"]) else 1
