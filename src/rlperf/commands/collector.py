"""`rlperf collector`: the e2e collector on this machine: both MuJoCo steppers, then the collector step per arm.

    rlperf collector --task g1_walk_flat --num-envs 16,64 --physics-threads 1,2 --steps 8 \
        --out-json out/collector/walk.json

Arms (kernel x reset path x physics) run one step each in turn, so a shared or noisy machine affects them
alike; per-phase medians are reported with the raw samples, and the machine identity is stored with the
result (e2e.collector.measure; docs/e2e-collector.md). Bad input exits 2 before anything is measured.
"""

from __future__ import annotations

import itertools
import shlex
import sys
from pathlib import Path

from rlperf.commands.args import at_least, parse_positive_list, writable_file
from rlperf.errors import UsageError, choice_error


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--task", default="g1_walk_flat", help="collector task: g1_walk_flat or g1_motion_tracking")
    p.add_argument("--num-envs", default="16,64", help="comma-separated env counts")
    p.add_argument("--physics-threads", default="1,2", help="comma-separated stepper sweep thread counts")
    p.add_argument("--kernels", default="fused,numpy", help="comma-separated update_state kernels: fused, numpy")
    p.add_argument("--reset-paths", default="rows,full", help="comma-separated reset paths: rows, full")
    p.add_argument("--physics", default="mujoco,recorded", help="comma-separated physics: mujoco, recorded")
    p.add_argument("--numba-threads", type=int, default=1, help="Numba threads of the collector's kernels")
    p.add_argument("--torch-threads", type=int, default=1, help="torch threads of the collector's policy")
    p.add_argument("--steps", type=int, default=8, help="timed collector steps per arm")
    p.add_argument("--warmup", type=int, default=2, help="untimed collector steps per arm first")
    p.add_argument("--repeats", type=int, default=3, help="stepper timing repeats")
    p.add_argument("--seed", type=int, default=0, help="seed of every collector")
    p.add_argument("--reset-fraction", type=float, default=0.02,
                   help="rows forced to truncate each step (C1 models 2%%); 0 leaves episodes alone")
    p.add_argument("--out-json", help="write the result document here (checked before measuring)")
    return p


def _choices(text: str, what: str, valid) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    for v in values:
        if v not in valid:
            raise choice_error(what, v, valid)
    if not values:
        raise UsageError(f"{what}: give at least one of {', '.join(valid)}")
    return values


def run(args) -> int:
    from rlperf.e2e.collector import KERNELS, PHYSICS, RESET_PATHS, ThreadBudget
    from rlperf.e2e.collector.config import TASKS

    if args.task not in TASKS:
        raise choice_error("task", args.task, TASKS)
    envs = parse_positive_list(args.num_envs, "--num-envs")
    threads = parse_positive_list(args.physics_threads, "--physics-threads")
    arms = list(itertools.product(_choices(args.kernels, "kernel", KERNELS),
                                  _choices(args.reset_paths, "reset path", RESET_PATHS),
                                  _choices(args.physics, "physics", PHYSICS)))
    at_least("--steps", args.steps, 1)
    at_least("--warmup", args.warmup, 0)
    at_least("--repeats", args.repeats, 1)
    if not 0.0 <= args.reset_fraction <= 1.0:
        raise UsageError(f"--reset-fraction: {args.reset_fraction} must lie in [0, 1]")
    budget = ThreadBudget(max(threads), at_least("--numba-threads", args.numba_threads, 1),
                          at_least("--torch-threads", args.torch_threads, 1))
    if args.out_json:
        writable_file(Path(args.out_json), "--out-json")
    from rlperf.e2e.collector.assets import require_mujoco, scene_path

    require_mujoco()
    scene_path()

    from rlperf.e2e.collector.measure import measure
    from rlperf.report.jsonio import write_json

    command = "rlperf " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["collector"] else "rlperf collector"
    doc = measure(args.task, envs, threads, arms, budget, steps=args.steps, warmup=args.warmup,
                  repeats=args.repeats, seed=args.seed, reset_fraction=args.reset_fraction, command=command)
    for s in doc["steppers"]:
        ms = s["ms_per_control_step"]
        print(f"steppers N={s['num_envs']} threads={s['threads']}: rollout {ms['rollout']:.2f} ms, "
              f"pool {ms['pool']:.2f} ms per control step -> {s['fastest']} "
              f"({s[s['fastest']]['per_env_mj_step_us']:.1f} us per env mj_step)")
    for r in doc["collector"]:
        print(f"{r['task']} N={r['num_envs']} {r['kernel']:5s} reset={r['reset_path']:4s} {r['physics']:8s} "
              + " ".join(f"{k}={v:.2f}" for k, v in r["median_ms"].items())
              + f" | min total={r['min_ms']['total']:.2f} update_state={r['min_ms']['update_state']:.2f}"
              f" reset_done={r['min_ms']['reset_done']:.2f}")
    if args.out_json:
        print(f"wrote {write_json(args.out_json, doc)}")
    return 0
