"""`rlperf plan`: rank the replay placements for a task, capacity, GPU count and layout on one machine.

The machine's ceilings (host copy, pinned H2D, HBM copy, free host and device memory) come from its
last `rlperf replay` results JSON (results/reports/replay/<machine>/results.json) or are measured now
(--measure). Each feasible placement gets a modelled time per learner iteration (a floor at those
ceilings, docs/limits.md 1.4) and its memory, with the run's measured figure beside it; infeasible ones
are listed with the bytes needed and available. Exit 0 when some placement is feasible, 1 when none
is, 2 on bad input (the message names the valid choices).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path

from rlperf.commands.args import parse_positive_list, task_help
from rlperf.errors import UsageError, choice_error
from rlperf.measure.guards import gib
from rlperf.report.tables import markdown_table

DEFAULT_TASK, DEFAULT_SIM = "g1_motion_tracking", "motrix"
DEFAULT_RESULTS_DIR = "results/reports/replay"
GIB = 2**30
TABLE_HEADERS = ("rank", "placement", "transfer", "row B", "model ms", "bound by", "last measured ms", "host GiB",
                 "device GiB")
TABLE_ALIGN = "rllrrllrr"


def add_parser(sub, name: str, help_text: str) -> None:
    from rlperf.plan.model import LAYOUTS

    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default=DEFAULT_TASK, help=task_help())
    p.add_argument("--sim", default=DEFAULT_SIM, help="simulator profile of the task (its conf/task/sac/<task>/<sim>.yaml)")
    capacity = p.add_mutually_exclusive_group()
    capacity.add_argument("--capacity-exponent", default=None, help="capacity 2**E rows (default 20)")
    capacity.add_argument("--capacity-rows", default=None, help="capacity in rows")
    p.add_argument("--gpus", default="1", help="learner GPUs (one process per rank above 1)")
    p.add_argument("--layout", default="native", help=f"stored row layout: {', '.join(LAYOUTS)}")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--results", metavar="PATH", default=None, help="a `rlperf replay` results JSON")
    src.add_argument("--machine", default=None,
                     help="use <results-dir>/<machine>/results.json (default: this machine's name)")
    src.add_argument("--measure", action="store_true", help="measure this machine's ceilings now (imports torch)")
    p.add_argument("--results-dir", default=DEFAULT_RESULTS_DIR, help="folder of per-machine `rlperf replay` reports (with --machine)")
    p.add_argument("--host-free-gib", type=float, default=None,
                   help="host memory free for the replay (default: the run's RAM available at its start)")
    p.add_argument("--device-free-gib", type=float, default=None,
                   help="device memory free per GPU (default: from the run, or measured with --measure)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _one_positive(text: str, flag: str) -> int:
    """One positive integer; every wrong value ('0', '1,2', 'x') gets the same message."""
    try:
        values = parse_positive_list(text, flag)
    except UsageError:
        values = []
    if len(values) != 1 or "," in str(text):
        raise UsageError(f"{flag} takes one positive integer, e.g. {flag} 1; got {text!r}")
    return values[0]


def _capacity_rows(args) -> int:
    if args.capacity_rows is not None:
        return _one_positive(args.capacity_rows, "--capacity-rows")
    exp = _one_positive(args.capacity_exponent or "20", "--capacity-exponent")
    if exp > 40:
        raise UsageError(f"--capacity-exponent: {exp} is beyond any machine (max 40)")
    return 2**exp


def _ceilings(args):
    """(ceilings, results document or None), from the chosen source."""
    from rlperf.plan import ceilings as c

    if args.measure:
        return c.measure_now(), None
    if args.results:
        path = args.results
    else:
        from rlperf.measure.machine import machine_name

        path = c.results_for_machine(args.results_dir, args.machine or machine_name())
    doc = c.load_results(path)
    superseded = c.superseded_note(path)
    ceil = c.from_results(doc, str(path))
    if superseded:
        print(f"rlperf plan: warning: {path} is marked superseded ({Path(path).parent}/SUPERSEDED.md says why); "
              "its ceilings may no longer hold", file=sys.stderr)
        ceil = dataclasses.replace(ceil, notes=(*ceil.notes, f"WARNING: these results are marked superseded "
                                                             f"({superseded})"))
    return ceil, doc


def _with_memory(ceil, doc, args):
    """The ceilings with the free memory the user stated, if any (GiB, > 0); the note about the run's own
    figure for that memory is replaced by one naming the flag."""
    changes, notes = {}, list(ceil.notes)
    for flag, field, note_prefix, value in (
            ("--host-free-gib", "host_free_bytes", "host free", args.host_free_gib),
            ("--device-free-gib", "device_free_bytes", "free device", args.device_free_gib)):
        if value is None:
            continue
        if not math.isfinite(value) or value <= 0:
            raise UsageError(f"{flag}: {value:g} must be a finite positive number of GiB")
        changes[field] = int(value * GIB)
        notes = [n for n in notes if not n.startswith(note_prefix)] + [f"{flag} {value:g} given"]
    return (dataclasses.replace(ceil, notes=tuple(notes), **changes) if changes else ceil), doc


def run(args) -> int:
    from rlperf.plan import plan
    from rlperf.plan.model import LAYOUTS
    from rlperf.workload import compose

    if args.layout not in LAYOUTS:
        raise choice_error("layout", args.layout, LAYOUTS)
    capacity_rows, gpus = _capacity_rows(args), _one_positive(args.gpus, "--gpus")
    wl = compose(args.task, args.sim, gpus=gpus)
    ceil, doc = _with_memory(*_ceilings(args), args)
    rows = plan(obs=wl.obs_dim, act=wl.action_dim, critic=wl.critic_dim, sample_rows=wl.sample_rows_per_rank,
                capacity_rows=capacity_rows, gpus=gpus, layout=args.layout, ceil=ceil, results=doc)
    context = {"task": wl.task, "sim": wl.sim, "capacity_rows": capacity_rows, "gpus": gpus, "layout": args.layout,
               "sample_rows_per_rank": wl.sample_rows_per_rank, "ceilings": asdict(ceil)}
    if args.json:
        print(json.dumps({**context, "rows": [_row_dict(r) for r in rows]}, indent=2))
    else:
        print("\n".join(format_lines(context, rows)))
    return 0 if any(r.feasible for r in rows) else 1


def _row_dict(row) -> dict:
    out = asdict(row)
    out["feasible"] = row.feasible
    return out


def format_lines(ctx: dict, rows) -> list[str]:
    """The ranked table, then the infeasible placements with their reasons, then the model's notes."""
    c = ctx["ceilings"]
    rate = lambda v: f"{v / 1e9:,.1f} GB/s" if v else "n/a"  # noqa: E731
    lines = [
        f"# rlperf plan: {ctx['task']}/{ctx['sim']}, {ctx['capacity_rows']:,} rows, {ctx['gpus']} GPU(s), "
        f"layout {ctx['layout']}, S = {ctx['sample_rows_per_rank']:,} rows per rank",
        f"machine {c['machine']} ({c['source']}): host copy {rate(c['host_copy_Bps'])}, H2D {rate(c['h2d_Bps'])}, "
        f"HBM copy {rate(c['d2d_Bps'])}, host free {gib(c['host_free_bytes'])} GiB, "
        f"device free {gib(c['device_free_bytes'])} GiB",
        *(f"note: {n}" for n in c["notes"]), "",
    ]
    table, notes = [], {}
    for i, r in enumerate((r for r in rows if r.feasible), 1):
        e = r.estimate
        meas = f"{r.measured.median_ms:.3f} ({r.measured.metric})" if r.measured else f"- ({r.measured_note})"
        table.append([i, r.name, r.transfer, f"{e.row_bytes:,}", f"{e.model_ms:.3f}", e.bound_by, meas,
                      gib(e.host_bytes), gib(e.device_bytes)])
        notes.update({f"{r.name}: {n}": None for n in r.notes})
    if table:
        lines += markdown_table(TABLE_HEADERS, table, align=TABLE_ALIGN)
    else:
        lines.append(f"no placement fits {ctx['capacity_rows']:,} rows on {ctx['gpus']} GPU(s) of this machine: "
                     "each one's reason is below (exit 1)")
    bad = [r for r in rows if not r.feasible]
    if bad:
        lines += ["", "infeasible:"]
        for r in bad:
            seen = (f" (yet the run measured this point: {r.measured.median_ms:.3f} ms {r.measured.metric}; "
                    f"it had more memory free than stated above)") if r.measured else ""
            lines.append(f"- {r.name}: {r.reason}{seen}")
    if notes:
        lines += ["", *(f"note: {n}" for n in notes)]
    lines += ["", "model ms is a floor at the ceilings above (bytes / rate per docs/limits.md 1.4), not a forecast;"
              " the measured figure is the run's median at the same point"]
    return lines
