#!/usr/bin/env python
"""One-thread profile of the env kernels: instructions per env (callgrind) and interleaved A/B timings.

Why: wall clocks on a shared 2-vCPU box are noisy, instruction counts are not. `count` runs each variant
under `valgrind --tool=callgrind --instr-atstart=no`; a tiny C helper built on the fly from valgrind's
callgrind.h starts instrumentation just before K calls on the same inputs and stops it after, so imports,
input generation and the (cached) compile are never counted. Ir / (K * envs) is the work of one call per
env, launch and host-side log reduction included. `time` interleaves the variants call by call in one
process at 1 Numba thread and reports medians and minima. Used for docs/kernel-profile.md.

    python scripts/kernel_profile.py count probe probe-spec --envs 8192
    python scripts/kernel_profile.py time probe probe-spec probe-numpy --envs 8192 --rounds 60
    python scripts/kernel_profile.py run probe --envs 8192 --calls 3      # what `count` runs under valgrind
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = {  # name -> (task, kind): kind is fused, numpy (the fast reference), literal or spec
    "probe": ("probe", "fused"), "probe-spec": ("probe", "spec"), "probe-numpy": ("probe", "numpy"),
    "probe-literal": ("probe", "literal"),
    "walk": ("g1_walk_flat", "fused"), "walk-numpy": ("g1_walk_flat", "numpy"),
    "walk-literal": ("g1_walk_flat", "literal"),
    "mt": ("g1_motion_tracking", "fused"), "mt-numpy": ("g1_motion_tracking", "numpy"),
    "mt-literal": ("g1_motion_tracking", "literal"),
}


def make_call(variant: str, num_envs: int, seed: int = 0):
    """A zero-argument callable running one step of `variant` at 1 Numba thread (compiled already)."""
    from rlperf.envs import registry, threads

    task, kind = VARIANTS[variant]
    threads.prepare_numba()
    workload = registry.get(task)
    inputs = workload.make_inputs(num_envs, registry.default_profile(workload), seed=seed, noise_level=1.0)
    threads.apply_budget(1)
    if kind == "fused":
        workload.compile()
        call = workload.fused_runner(inputs, 1)
    elif kind == "spec":
        from rlperf.envs.probe.spec_kernel import SpecProbeRunner

        call = SpecProbeRunner(inputs, 1)
    elif kind == "numpy":
        call = lambda: workload.reference(inputs)  # noqa: E731
    else:
        literal = getattr(workload, "reference_literal", None)
        if literal is None:
            raise SystemExit(f"{variant}: task {task} has no literal reference")
        call = lambda: literal(inputs)  # noqa: E731
    call()  # compile / first touch outside anything counted
    return call


_HELPER_C = """
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("counted"); }
"""


def _callgrind_helper(folder: str):
    """ctypes handle with start()/stop() client requests (no-ops when not under valgrind)."""
    import ctypes

    src, lib = os.path.join(folder, "cg.c"), os.path.join(folder, "cg.so")
    with open(src, "w") as fh:
        fh.write(_HELPER_C)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", src, "-o", lib], check=True)
    return ctypes.CDLL(lib)


def cmd_run(args) -> int:
    call = make_call(args.variant, args.envs)
    helper = _callgrind_helper(args.helper_dir) if args.helper_dir else None
    if helper:
        helper.start()
    for _ in range(args.calls):
        call()
    if helper:
        helper.stop()
    return 0


def _callgrind_ir(variant: str, envs: int, calls: int) -> int:
    """Instructions executed by `calls` calls of `variant` (only those: instrumentation is off elsewhere)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
               sys.executable, __file__, "run", variant, "--envs", str(envs), "--calls", str(calls),
               "--helper-dir", tmp]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"callgrind failed for {variant}:\n{proc.stderr[-3000:]}")
        dumps = sorted(f for f in os.listdir(tmp) if f.startswith("cg.out"))
        for name in dumps:
            with open(os.path.join(tmp, name)) as fh:
                text = fh.read()
            if "counted" in text.split("\n\n", 1)[0] or re.search(r"^desc: Trigger: .*counted", text, re.M):
                return int(re.findall(r"^(?:summary|totals):\s+(\d+)", text, re.M)[-1])
        raise SystemExit(f"callgrind for {variant}: no 'counted' dump among {dumps}")


def cmd_count(args) -> int:
    print(f"| variant | envs | calls | instructions | instructions per env per call |")
    print("|---|---:|---:|---:|---:|")
    for variant in args.variants:
        ir = _callgrind_ir(variant, args.envs, args.calls)
        print(f"| {variant} | {args.envs} | {args.calls} | {ir} | {ir / (args.calls * args.envs):.1f} |",
              flush=True)
    return 0


def cmd_time(args) -> int:
    calls = {v: make_call(v, args.envs) for v in args.variants}
    samples: dict[str, list[float]] = {v: [] for v in args.variants}
    for _ in range(args.rounds):  # interleaved: every round runs each variant once, in turn
        for v, call in calls.items():
            t0 = time.perf_counter()
            call()
            samples[v].append((time.perf_counter() - t0) * 1e3)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} interleaved rounds, 1 Numba thread")
    print("| variant | envs | median ms | min ms | ns per env (median) |")
    print("|---|---:|---:|---:|---:|")
    for v, s in samples.items():
        med = statistics.median(s)
        print(f"| {v} | {args.envs} | {med:.3f} | {min(s):.3f} | {med * 1e6 / args.envs:.0f} |")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("variant", choices=VARIANTS)
    run.add_argument("--envs", type=int, default=8192)
    run.add_argument("--calls", type=int, default=1)
    run.add_argument("--helper-dir", help=argparse.SUPPRESS)
    count = sub.add_parser("count")
    count.add_argument("variants", nargs="+", choices=VARIANTS)
    count.add_argument("--envs", type=int, default=8192)
    count.add_argument("--calls", type=int, default=2)
    tm = sub.add_parser("time")
    tm.add_argument("variants", nargs="+", choices=VARIANTS)
    tm.add_argument("--envs", type=int, default=8192)
    tm.add_argument("--rounds", type=int, default=40)
    args = p.parse_args(argv)
    return {"run": cmd_run, "count": cmd_count, "time": cmd_time}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
