"""`rlperf replay`: measure replay placements over capacities and GPU counts, write JSON + charts.

Flags follow the reference benchmark (docs/workloads.md A7) so its users feel at home.
"""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from pathlib import Path

from rlperf.commands.args import (add_report_flags, at_least, check_writable, only_with_plot_only,
                                  parse_positive_list, task_help, writable_file)
from rlperf.errors import UsageError
from rlperf.replay.placements import lookup
from rlperf.replay.cases import (ALL_SPECS, CAPACITY_EXPONENTS, DEFAULT_PLACEMENTS, DEFAULT_SIM, DEFAULT_TASK,
                                 default_torch_threads, iter_cases, min_capacity_rows, workload_for)

SCHEMA, SCHEMA_VERSION = "rlperf.replay", 1
DEFAULT_OUT = "out/replay/results.json"


def add_parser(sub, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default=DEFAULT_TASK, help=task_help())
    p.add_argument("--sim", default=DEFAULT_SIM, help="simulator profile of the task (its conf/task/sac/<task>/<sim>.yaml)")
    p.add_argument("--gpu-counts", default="1,2,4,8", help="world sizes; those above the visible GPUs are skipped")
    p.add_argument("--capacity-exponents", default=None,
                   help=f"comma list e, capacity 2**e rows (default {','.join(map(str, CAPACITY_EXPONENTS))})")
    p.add_argument("--capacity-rows", default=None, help="explicit comma list of capacities (overrides exponents)")
    p.add_argument("--placements", default=",".join(DEFAULT_PLACEMENTS),
                   help=f"comma list of: {', '.join(DEFAULT_PLACEMENTS)}")
    p.add_argument("--combination", action="append", default=[], metavar="CONFIG",
                   help="one more placement from its parts, e.g. storage=device-bf16,sampler=fused[,transfer=none] "
                        "(repeatable; storage = <host|host-pinned|device>-<layout>)")
    p.add_argument("--layouts", action="store_true",
                   help="print every layout's bytes per row and per learner iteration for --task/--sim, measure nothing")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations per point before timing")
    p.add_argument("--repeat", type=int, default=20, help="timed iterations per point (their median is reported)")
    p.add_argument("--seed", type=int, default=12345, help="seed of the synthetic inputs and samplers (the same seed gives the same inputs)")
    p.add_argument("--torch-threads", default="auto", help="'auto' = cpu_count // world size, or an integer")
    p.add_argument("--no-ceilings", action="store_true", help="skip measuring host/PCIe/HBM ceilings")
    add_report_flags(p, "replay", "analysis.md", DEFAULT_OUT)


def _capacity_rows(args) -> list[int]:
    """The capacities to measure, every one checked against the workload before anything runs."""
    if args.capacity_rows:
        flag, capacity_rows = "--capacity-rows", parse_positive_list(args.capacity_rows, "--capacity-rows")
    elif args.capacity_exponents:
        exponents = parse_positive_list(args.capacity_exponents, "--capacity-exponents")
        if max(exponents) > 40:
            raise UsageError(f"--capacity-exponents: {max(exponents)} is beyond any machine (max 40)")
        flag, capacity_rows = "--capacity-exponents", [2**e for e in exponents]
    else:
        flag, capacity_rows = "--capacity-exponents", [2**e for e in CAPACITY_EXPONENTS]
    least = min_capacity_rows(workload_for(args.task, args.sim))
    small = [rows for rows in capacity_rows if rows < least]
    if small:
        raise UsageError(f"{flag}: capacity {', '.join(f'{rows:,}' for rows in small)} rows cannot be sampled: the "
                         f"newest step of {args.task}/{args.sim} ({least - 1:,} rows = num_envs) is never "
                         f"sampled, so the minimum is {least:,} rows (exponent {(least - 1).bit_length()})")
    return capacity_rows


def _threads(text: str, world_size: int) -> int:
    if text == "auto":
        return default_torch_threads(world_size)
    value = parse_positive_list(text, "--torch-threads")
    if len(value) != 1:
        raise UsageError("--torch-threads takes one integer or 'auto'")
    return value[0]


def _validate(args) -> None:
    only_with_plot_only(args, plot_dir=False)
    at_least("--warmup", args.warmup, 0)
    at_least("--repeat", args.repeat, 1)
    if args.torch_threads != "auto":
        _threads(args.torch_threads, 1)


def run(args) -> int:
    if args.plot_only:
        return _plot_only(args)
    if args.layouts:
        return _print_layouts(args)
    _validate(args)
    gpu_counts = parse_positive_list(args.gpu_counts, "--gpu-counts")
    placements = [p.strip() for p in args.placements.split(",") if p.strip()]
    if not placements and not args.combination:
        raise UsageError(f"--placements: empty list; valid: {', '.join(ALL_SPECS)} (or give --combination)")
    placements += [lookup(text).name for text in args.combination]
    cases = iter_cases(args.task, args.sim, capacity_rows=_capacity_rows(args), placements=placements,
                       gpu_counts=gpu_counts)
    out_json = writable_file(Path(args.out_json), "--out-json")
    if args.plot_dir:
        check_writable(Path(args.plot_dir))
    doc = measure(cases, args, gpu_counts)
    return _finish(doc, out_json, Path(args.plot_dir) if args.plot_dir else out_json.parent, args.no_plots)


def _finish(doc: dict, out_json: Path, plot_dir: Path, no_plots: bool) -> int:
    """analysis.md and the charts published with the JSON, JSON last (commands.outputs.finish)."""
    from functools import partial

    from rlperf.commands.outputs import finish

    doc["analysis_markdown"] = str(plot_dir / "analysis.md")
    return finish(doc, out_json, plot_dir, partial(_reports, charts=not no_plots), rows="results", noun="case")


def measure(cases, args, gpu_counts) -> dict:
    """Run every case (skips recorded with reasons); returns the result document."""
    from tqdm import tqdm

    from rlperf.measure.ceilings import measure_ceilings
    from rlperf.measure.machine import machine_identity, one_line
    from rlperf.replay.cases import Resources
    from rlperf.replay.run import learner_device, run_case

    res = Resources.probe()
    threads_1 = _threads(args.torch_threads, 1)
    batch_bytes = workload_for(args.task, args.sim).sample_bytes_per_rank  # what the ceilings bound
    ceilings = {} if args.no_ceilings else measure_ceilings(learner_device(), threads=threads_1,
                                                            nbytes=batch_bytes)
    results, skipped = [], []
    for case in tqdm(cases, desc="replay cases", unit="case", file=sys.stderr):
        outcome = run_case(case, res, warmup=args.warmup, repeat=args.repeat,
                           threads=_threads(args.torch_threads, case.gpus), seed=args.seed, ceilings=ceilings)
        skipped += outcome.skipped
        if outcome.result:
            results.append(outcome.result)
    ident = machine_identity()
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "rlperf " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["replay"] else "rlperf replay",
        "machine": ident, "device_info": one_line(ident),
        "args": {"task": args.task, "sim": args.sim, "gpu_counts": gpu_counts,
                 "capacity_rows": sorted({c.capacity_rows for c in cases}),
                 "placements": list(dict.fromkeys(c.placement for c in cases)),
                 "warmup": args.warmup, "repeat": args.repeat, "seed": args.seed,
                 "torch_threads": args.torch_threads, "prefill": "pattern (row index + ramp)",
                 "index_mode": "timed", "sampling": "uniform with replacement over the full capacity"},
        "workload": workload_for(args.task, args.sim).summary(),
        "layouts": _layouts(args.task, args.sim),
        "ceilings": ceilings, "results": results, "skipped": skipped,
    }


def _layouts(task: str, sim: str) -> list[dict]:
    from rlperf.replay.layouts import layout_table

    wl = workload_for(task, sim)
    return layout_table(wl.layout, wl.sample_rows_per_rank)


def _print_layouts(args) -> int:
    from rlperf.report.replay_layouts import layout_lines

    print("\n".join(layout_lines(_layouts(args.task, args.sim), f"{args.task}/{args.sim}")))
    return 0


def _reports(doc: dict, plot_dir: Path, charts: bool = True) -> list[Path]:
    """analysis.md always (it is text, and the JSON names it), the charts unless told not to."""
    from rlperf.atomic import write_text
    from rlperf.report.replay_charts import write_charts
    from rlperf.report.replay_markdown import analysis_lines

    write_text(plot_dir / "analysis.md", "\n".join(analysis_lines(doc)) + "\n")
    return write_charts(doc, plot_dir) if doc["results"] and charts else []


SHAPE = {"results": list, "skipped": list, "workload": dict, "args": dict}  # what --plot-only reads


def _plot_only(args) -> int:
    from rlperf.commands.outputs import replot

    _doc, _folder, published = replot(args, "replay", schema=SCHEMA, version=SCHEMA_VERSION, shape=SHAPE,
                                      reports=_reports)
    for p in published:
        print(f"wrote {p}")
    return 0
