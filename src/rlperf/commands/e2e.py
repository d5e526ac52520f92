"""`rlperf e2e`: the single-GPU SAC iteration (collector, replay placement, prefetch, SAC learner).

For every env count, placement, schedule and prefetch mode: iterations fed from the replay and the
same iterations fed with a resident batch, alternating; then the collector step with each
update_state kernel. Writes a versioned JSON with raw per-iteration samples (schema rlperf.e2e v1),
report.md and charts next to it. Every input is checked before anything is measured or written.
Progress goes to stderr: first what runs where (without CUDA the learner runs on the CPU and the
GPU placements are skipped), then each step before it starts, with its duration.
Defaults follow docs/e2e-h200.md: the async schedule, and CUDA graphs for the learner where a CUDA
device is visible (--learner-graphs auto; there are none on the CPU). Measure the synchronous
schedule or the ungraphed learner with --schedule synchronous / --learner-graphs off.
Exit codes: 0 measured, 1 no point could run (reasons in `skipped`), 2 bad input.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import sys
from pathlib import Path

from rlperf.commands.args import (add_report_flags, at_least, only_with_plot_only, parse_positive_list,
                                  task_help, writable_file)
from rlperf.errors import UsageError, choice_error

SCHEMA, SCHEMA_VERSION = "rlperf.e2e", 1
DEFAULT_OUT = "out/e2e/results.json"
DEFAULT_TASK, DEFAULT_SIM = "g1_motion_tracking", "mujoco"
DEFAULT_SCHEDULE = "async"  # docs/e2e-h200.md: the learner overlaps the collector's physics
LEARNER_GRAPHS = ("auto", "on", "off")
GRAPHS_KEY = "algo.use_cuda_graphs"


def add_parser(sub, name: str, help_text: str) -> None:
    from rlperf.e2e.loop.batches import single_gpu_placements
    from rlperf.e2e.loop.collectors import KERNELS, PHYSICS
    from rlperf.e2e.loop.prefetch import PREFETCH_MODES
    from rlperf.e2e.loop.schedules import SCHEDULES

    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default=DEFAULT_TASK, help=task_help())
    p.add_argument("--sim", default=DEFAULT_SIM, help="simulator profile of the task (its conf/task/sac/<task>/<sim>.yaml)")
    p.add_argument("--placements", default=",".join(single_gpu_placements()),
                   help=f"comma list of: {', '.join(single_gpu_placements())}")
    p.add_argument("--prefetch", default=",".join(PREFETCH_MODES), help=f"comma list of: {', '.join(PREFETCH_MODES)}")
    p.add_argument("--schedule", default=DEFAULT_SCHEDULE,
                   help=f"comma list of: {', '.join(SCHEDULES)}; async is the recommended setting of "
                        f"docs/e2e-h200.md (the learner overlaps the collector's physics)")
    p.add_argument("--learner-graphs", default="auto", choices=LEARNER_GRAPHS,
                   help=f"CUDA graphs for the learner (torch.compile mode 'reduce-overhead'), one of: "
                        f"{', '.join(LEARNER_GRAPHS)}; auto (default): on where a CUDA device is visible and "
                        f"algo.use_compile is true, off on the CPU, where there are none; an explicit "
                        f"{GRAPHS_KEY}=... override is used as given")
    p.add_argument("--num-envs", default=None, help="comma list of env counts (default: the task config's)")
    p.add_argument("--iterations", type=int, default=20, help="measured iterations per point and batch source")
    p.add_argument("--warmup-iterations", type=int, default=3, help="untimed iterations per point before timing")
    p.add_argument("--physics", default=PHYSICS[0], help=f"one of: {', '.join(PHYSICS)}")
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help=f"collector A/B kernels, comma list of: {', '.join(KERNELS)}")
    p.add_argument("--ab-steps", type=int, default=8, help="collector steps per kernel in the A/B (0: skip it)")
    p.add_argument("--threads", default="auto", help="collector and torch threads: 'auto' (all cores) or an integer")
    p.add_argument("--seed", type=int, default=0, help="seed of the envs, the policy and the replay sampler")
    p.add_argument("--profile", metavar="TRACE.json", default=None,
                   help="write a torch.profiler Chrome trace of one iteration (phases as NVTX/record_function)")
    add_report_flags(p, "e2e", "report.md", DEFAULT_OUT)
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. algo.use_compile=false")


def _choices(text: str, valid, what: str) -> tuple[str, ...]:
    items = tuple(dict.fromkeys(t.strip() for t in str(text).split(",") if t.strip()))
    if not items:
        raise UsageError(f"--{what}: empty list; valid: {', '.join(valid)}")
    for item in items:
        if item not in valid:
            raise choice_error(what.rstrip("s") if what != "prefetch" else "prefetch mode", item, valid)
    return items


def plan_from_args(args):
    """Validated E2EPlan; raises UsageError before anything is measured."""
    from rlperf.e2e.loop.batches import single_gpu_placements
    from rlperf.e2e.loop.collectors import KERNELS, PHYSICS
    from rlperf.e2e.loop.prefetch import PREFETCH_MODES
    from rlperf.e2e.loop.schedules import SCHEDULES
    from rlperf.e2e.loop.session import E2EPlan
    from rlperf.workload import compose

    only_with_plot_only(args, plot_dir=False)
    base = compose(args.task, args.sim, args.overrides)
    if args.physics not in PHYSICS:
        raise choice_error("physics", args.physics, PHYSICS)
    threads = os.cpu_count() or 1
    if args.threads != "auto":
        values = parse_positive_list(args.threads, "--threads")
        if len(values) != 1:
            raise UsageError("--threads takes one integer or 'auto'")
        threads = values[0]
    plan = E2EPlan(
        task=args.task, sim=args.sim,
        placements=_choices(args.placements, single_gpu_placements(), "placements"),
        prefetch=_choices(args.prefetch, PREFETCH_MODES, "prefetch"),
        schedules=_choices(args.schedule, SCHEDULES, "schedule"),
        num_envs=tuple(parse_positive_list(args.num_envs, "--num-envs")) if args.num_envs else (base.num_envs,),
        iterations=at_least("--iterations", args.iterations, 1),
        warmup=at_least("--warmup-iterations", args.warmup_iterations, 0), physics=args.physics,
        kernels=_choices(args.kernels, KERNELS, "kernels"), ab_steps=at_least("--ab-steps", args.ab_steps, 0),
        threads=threads, seed=args.seed, overrides=tuple(args.overrides),
        profile=str(writable_file(Path(args.profile), "--profile")) if args.profile else None)
    plan = _with_learner_graphs(plan, args.learner_graphs)
    for n in plan.num_envs:
        plan.learner(n)  # every override valid for every env count, learner values included
    _fits_in_memory(plan.workload(max(plan.num_envs)))
    writable_file(Path(args.out_json), "--out-json")
    if args.plot_dir:
        writable_file(Path(args.plot_dir) / "report.md", "--plot-dir")
    return plan


def _with_learner_graphs(plan, mode: str):
    """The plan with --learner-graphs resolved into an algo.use_cuda_graphs override (or none)."""
    import dataclasses

    from rlperf.e2e.loop.session import learner_device

    named = any(o.lstrip("+~").split("=", 1)[0].strip() == GRAPHS_KEY for o in plan.overrides)
    cuda = learner_device() is not None
    if mode == "auto":
        on = cuda and not named and plan.learner(plan.num_envs[0]).use_compile
        return dataclasses.replace(plan, overrides=(*plan.overrides, f"{GRAPHS_KEY}=true")) if on else plan
    if named:
        raise UsageError(f"--learner-graphs {mode} and the override {GRAPHS_KEY}=... both set the learner's "
                         f"CUDA graphs; give one of them")
    if mode == "on" and not cuda:
        raise UsageError("--learner-graphs on needs a CUDA device; none is visible (valid here: auto, off)")
    return dataclasses.replace(plan, overrides=(*plan.overrides, f"{GRAPHS_KEY}={'true' if mode == 'on' else 'false'}"))


def _fits_in_memory(wl) -> None:
    """Refuse, before allocating, an env count whose collector output alone the host cannot hold (one
    sync of rows: num_envs x env_steps_per_sync x row bytes; a lower bound, the envs' state comes on top)."""
    from rlperf.measure.guards import require_host

    rows = wl.collector_rows_per_iteration
    require_host(rows * wl.row_bytes, f"{wl.num_envs:,} envs: one collector sync of {rows:,} rows x "
                                      f"{wl.row_bytes:,} B", "--num-envs")


def run(args) -> int:
    if args.plot_only:
        return _plot_only(args)
    from rlperf.e2e import progress
    from rlperf.e2e.loop import collectors

    with progress.to_stderr():
        with progress.stage("checking the inputs (task config, overrides, memory, output paths)"):
            plan = plan_from_args(args)
            missing = collectors.collector_missing_reason()
            if missing:
                raise UsageError(f"cannot run the iteration: {missing}")
        _say_where(plan)
        doc = measure(plan)
    out = Path(args.out_json)
    return _finish(doc, out, Path(args.plot_dir) if args.plot_dir else out.parent, args.no_plots)


def _say_where(plan) -> None:
    """The run's first lines after the input check: where the learner and collector run, what is skipped."""
    from rlperf.e2e import progress
    from rlperf.e2e.loop.outline import where_lines
    from rlperf.e2e.loop.session import learner_device

    device = learner_device()
    name = ""
    if device is not None:
        import torch

        name = torch.cuda.get_device_name(device)
    for line in where_lines(plan, device, name):
        progress.note(line)


def measure(plan) -> dict:
    from rlperf.e2e.loop.matrix import ROUNDS
    from rlperf.e2e.loop.session import run_plan
    from rlperf.report.e2e_report import summarize
    from rlperf.measure.machine import machine_identity, one_line

    result = run_plan(plan)
    ident = machine_identity()
    doc = {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "rlperf " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["e2e"] else "rlperf e2e",
        "machine": ident, "device_info": one_line(ident), "learner_device": result["device"],
        "args": {"task": plan.task, "sim": plan.sim, "placements": list(plan.placements),
                 "prefetch": list(plan.prefetch), "schedules": list(plan.schedules),
                 "num_envs": list(plan.num_envs), "iterations": plan.iterations,
                 "warmup_iterations": plan.warmup, "physics": plan.physics, "kernels": list(plan.kernels),
                 "ab_steps": plan.ab_steps, "threads": plan.threads, "seed": plan.seed,
                 "overrides": list(plan.overrides), "snapshot_rule": "indices of batch t+1 drawn when its "
                 "prefetch starts (before the next collector chunk); uniform over the full capacity"},
        "workload": {str(n): plan.workload(n).summary() for n in plan.num_envs},
        "learner": result["learner"], "rounds": ROUNDS,
        "learner_note": next(iter(result["learner"].values()))["symmetry"],
        "points": result["points"], "skipped": result["skipped"], "collector_ab": result["collector_ab"],
    }
    return summarize(doc)


def _finish(doc: dict, out_json: Path, plot_dir: Path, no_plots: bool) -> int:
    """report.md and the charts published with the JSON, JSON last (commands.outputs.finish)."""
    from functools import partial

    from rlperf.commands.outputs import finish

    doc["report_markdown"] = str(plot_dir / "report.md")
    return finish(doc, out_json, plot_dir, partial(_reports, plots=not no_plots), rows="points", noun="point")


def _reports(doc: dict, plot_dir: Path, *, plots: bool) -> list[Path]:
    from rlperf.report.e2e_report import report_lines
    from rlperf.atomic import write_text

    write_text(plot_dir / "report.md", "\n".join(report_lines(doc)) + "\n")
    if not plots or not (doc["points"] or doc.get("collector_ab")):
        return []
    from rlperf.report.e2e_charts import write_charts

    return write_charts(doc, plot_dir)


SHAPE = {"points": list, "skipped": list, "args": dict, "collector_ab": list}  # what --plot-only reads


def _replot_reports(doc: dict, folder: Path, *, plots: bool) -> list[Path]:
    from rlperf.report.e2e_report import summarize

    summarize(doc)
    return _reports(doc, folder, plots=plots)


def _plot_only(args) -> int:
    from functools import partial

    from rlperf.commands.outputs import replot

    _doc, _folder, published = replot(args, "e2e", schema=SCHEMA, version=SCHEMA_VERSION, shape=SHAPE,
                                      reports=partial(_replot_reports, plots=not args.no_plots))
    for p in published:
        print(f"wrote {p}")
    return 0
