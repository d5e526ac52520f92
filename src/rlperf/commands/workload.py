"""`rlperf workload`: print the derived replay workload of a task/sim."""

from __future__ import annotations

import json

from rlperf.commands.args import task_help
from rlperf.workload import DERIVED, compose

DEFAULT_TASK, DEFAULT_SIM = "g1_motion_tracking", "motrix"


def add_parser(sub, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("--task", default=DEFAULT_TASK, help=task_help())
    p.add_argument("--sim", default=DEFAULT_SIM, help="simulator profile of the task (its conf/task/sac/<task>/<sim>.yaml)")
    p.add_argument("--gpus", type=int, default=1, help="learner ranks (global ratios scale with it)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. algo.num_envs=4096")


def run(args) -> int:
    wl = compose(args.task, args.sim, args.overrides, gpus=args.gpus)
    summary = wl.summary()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    for line in format_lines(summary):
        print(line)
    return 0


def format_lines(summary: dict) -> list[str]:
    keys = ("task", "sim", "gpus", "obs_dim", "action_dim", "critic_dim", "num_envs", "batch_size",
            "use_symmetry", "updates_per_step", "replay_buffer_n", *DERIVED)
    width = max(map(len, keys))
    out = []
    for key in keys:
        value = summary[key]
        text = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
        if "bytes" in key and value >= 2**20:
            text += f"  ({value / 2**20:,.2f} MiB)"
        out.append(f"{key:<{width}} | {text}")
    return out
