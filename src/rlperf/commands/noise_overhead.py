"""`rlperf noise-overhead`: what drawing a task's actor noise inside its update_state kernel costs.

    rlperf noise-overhead --task g1_motion_tracking --num-envs 32768 --threads 2 --rounds 50

Three arms, interleaved round by round, each keeping its minimum (envs.noise_overhead): the kernel with
noise passed in, the kernel drawing it in-kernel, and numpy drawing the same values on one thread. Prints
one JSON object: min ms per arm, `overhead_ratio` (in-kernel / passed; target <= 1.15),
`numpy_over_in_kernel_draws` (target >= 20; null when the in-kernel increment is lost in the noise) and
`numpy_path_over_in_kernel` ((numpy + passed) / in-kernel: whole steps, always a value).
"""

from __future__ import annotations

import json

from rlperf.commands.args import at_least
from rlperf.errors import UsageError


def add_parser(subparsers, name: str, help_text: str):
    from rlperf.envs.noise_overhead import TASKS

    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", choices=tuple(TASKS), required=True, help="whose kernel: " + " or ".join(TASKS))
    p.add_argument("--num-envs", type=int, default=8192, help="env rows per kernel call")
    p.add_argument("--threads", type=int, default=1, help="Numba threads of both kernel arms (numpy runs on 1)")
    p.add_argument("--rounds", type=int, default=50, help="timed rounds; each arm keeps its minimum")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs and of the in-kernel draws")
    return p


def run(args) -> int:
    from rlperf.envs import threads
    from rlperf.envs.noise_overhead import measure

    for flag in ("num_envs", "threads", "rounds"):
        at_least("--" + flag.replace("_", "-"), getattr(args, flag), 1)
    threads.prepare_numba()
    cap = threads.max_numba_threads()
    if args.threads > cap:
        raise UsageError(f"--threads {args.threads} exceeds this machine's {cap}; valid: 1..{cap}")
    print(json.dumps(measure(args.num_envs, args.threads, task=args.task, rounds=args.rounds, seed=args.seed)))
    return 0
