"""`rlperf e2e-consistency`: does the SAC learner see the same data from the bf16 compact layout?

    rlperf e2e-consistency --task g1_motion_tracking --updates 50 [hydra overrides ...]

Two identically initialised learners train on the same indices, one from the packed fp32 layout, one
from the bf16 compact layout; their critic loss, mean Q and actor loss trajectories must agree within
--bound (relative, e2e.consistency). Prints one JSON object. Exit codes: 0 within the bound, 1 some
quantity left it, 2 bad input. Runs on CUDA when present, else on the CPU.
"""

from __future__ import annotations

import json

from rlperf.commands.args import at_least, task_help
from rlperf.errors import UsageError


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default="g1_motion_tracking", help=task_help())
    p.add_argument("--sim", default="mujoco", help="simulator profile of the task (its conf/task/sac/<task>/<sim>.yaml)")
    p.add_argument("--updates", type=int, default=50, help="SAC updates per learner")
    p.add_argument("--seed", type=int, default=0, help="seed of the learners, the fill and the sampled indices")
    p.add_argument("--bound", type=float,
                   help="largest accepted relative difference of each trajectory (default: the stated bound, "
                        "e2e.consistency.ACCEPT_REL = 2 %%)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. algo.num_envs=4096 algo.batch_size=1024")
    return p


def run(args) -> int:
    at_least("--updates", args.updates, 1)
    if args.bound is not None and not args.bound > 0:
        raise UsageError(f"--bound: {args.bound} must be > 0 (a relative difference, e.g. 0.02)")
    import torch

    from rlperf.e2e.consistency import ACCEPT_REL, check
    from rlperf.e2e.learner.config import learner_config
    from rlperf.workload import compose

    wl = compose(args.task, args.sim, args.overrides)
    cfg = learner_config(args.task, args.sim, args.overrides, workload=wl)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    report = check(cfg, wl, updates=args.updates, seed=args.seed, device=device,
                   bound=ACCEPT_REL if args.bound is None else args.bound)
    print(json.dumps({k: v for k, v in report.items() if k != "trajectories"}, indent=2))
    return 0 if report["ok"] else 1
