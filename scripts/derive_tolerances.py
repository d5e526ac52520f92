"""Derive the parity tolerances from observed differences and write src/rlperf/envs/tolerances.json.

For every task and profile, over SEEDS seeds and several env counts, on both the timing inputs (C5 at
noise level 0) and the coverage inputs (`make_parity_inputs`), it runs the fused kernel (1 thread; logs
are bitwise identical for any thread count) against the numpy oracle and records the worst absolute
difference per output (reward, per-term logs, observations incl. extras). Each tolerance is
rlperf.envs.tolerances.FACTOR x that worst difference (at least x RESOLUTION, float32's step at 1.0,
where the runs were bitwise equal), rtol 0. A termination mismatch is a broken
kernel, not a tolerance: the script stops with exit code 1 and writes nothing.

Re-run after any kernel or reference change (one command, a few minutes on 2 cores):

    python scripts/derive_tolerances.py [--seeds 50] [--num-envs 64,1000,4096] [--tasks ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from rlperf.envs import parity, registry, tolerances
from rlperf.envs.base import EnvOutputs
from rlperf.errors import EXIT_USAGE, UsageError


def _obs_pairs(ref: EnvOutputs, got: EnvOutputs):
    yield ref.actor_obs, got.actor_obs
    yield ref.critic_obs, got.critic_obs
    for key, value in ref.extras.items():
        yield value, got.extras.get(key, np.empty(0))


def diffs(ref: EnvOutputs, got: EnvOutputs) -> dict[str, float]:
    """Worst |got - ref| per tolerance output for one run."""
    logs = [parity.max_abs_diff(np.float64(ref.term_logs[k]), np.float64(got.term_logs.get(k, np.nan)))
            for k in ref.term_logs]
    return {"reward": parity.max_abs_diff(ref.reward, got.reward),
            "log": max(logs, default=0.0),
            "obs": max((parity.max_abs_diff(a, b) for a, b in _obs_pairs(ref, got)), default=0.0)}


def derive_task(task: str, seeds: int, num_envs: list[int]) -> dict:
    w = registry.get(task)
    w.compile()
    worst = {out: (0.0, None) for out in tolerances.OUTPUTS}
    runs = 0
    makers = {"timing": lambda n, p, s: w.make_inputs(n, p, seed=s, noise_level=0.0),
              "coverage": lambda n, p, s: parity.make_parity_inputs(w, n, p, seed=s)}
    for profile in w.profiles:
        for n in num_envs:
            for kind, make in makers.items():
                for seed in range(seeds):
                    inputs = make(n, profile, seed)
                    ref = w.reference(inputs)
                    got = w.fused_runner(inputs, 1)()
                    mismatch = int(np.count_nonzero(ref.terminated != got.terminated))
                    if mismatch:
                        raise SystemExit(f"{task} {profile} n={n} seed={seed} {kind}: {mismatch} termination "
                                         "mismatches; fix the kernel before deriving tolerances")
                    for out, value in diffs(ref, got).items():
                        if not np.isfinite(value):
                            raise SystemExit(f"{task} {profile} n={n} seed={seed} {kind}: non-finite {out} "
                                             "difference (NaN/inf disagreement); fix the kernel first")
                        if value > worst[out][0] or worst[out][1] is None:
                            worst[out] = (value, dict(profile=profile, num_envs=n, seed=seed, inputs=kind))
                    runs += 1
    return {"profiles": list(w.profiles), "runs": runs,
            "outputs": {out: {"atol": tolerances.tolerance_from(value), "rtol": 0.0, "worst_abs_diff": value,
                              "worst_at": at} for out, (value, at) in worst.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--num-envs", default="64,1000,4096")
    p.add_argument("--tasks", default=",".join(registry.TASKS))
    p.add_argument("--out", default=str(tolerances.PATH))
    args = p.parse_args(argv)
    from rlperf.commands.args import at_least, parse_positive_list
    from rlperf.measure.machine import machine_identity, one_line
    from rlperf.report.jsonio import write_json

    try:
        seeds = at_least("--seeds", args.seeds, 1)
        num_envs = sorted(parse_positive_list(args.num_envs, "--num-envs"))
        tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
        for task in tasks:
            registry.get(task)
        out = Path(args.out)
        if out.is_dir() or not out.parent.is_dir():
            raise UsageError(f"--out: {out} must be a file path in an existing folder")
    except UsageError as exc:
        print(f"derive_tolerances: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    import numba

    ident = machine_identity()
    t0 = time.perf_counter()
    doc = {
        "schema": tolerances.SCHEMA, "schema_version": tolerances.VERSION,
        "definition": "|fused - ref| <= atol + rtol * |ref| elementwise; terminations exact",
        "rule": f"atol = {tolerances.FACTOR:g} x max(worst observed |fused - ref|, {tolerances.RESOLUTION:.3g} "
                "(float32 step at 1.0)), rounded up to 2 significant digits; rtol = 0",
        "command": " ".join(["python scripts/derive_tolerances.py", shlex.join(sys.argv[1:] if argv is None else argv)]
                            ).strip(),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": one_line(ident), "numba": numba.__version__, "numpy": np.__version__,
        "seeds": seeds, "num_envs": num_envs, "threads": 1,
        "inputs": ["timing: make_inputs(noise_level=0) (C5)", "coverage: make_parity_inputs"],
        "tasks": {},
    }
    if out.exists():  # keep tasks not re-derived in this run
        try:
            doc["tasks"].update(tolerances.document(out)["tasks"])
        except RuntimeError:
            pass
    for task in tasks:
        print(f"deriving {task} ...", file=sys.stderr, flush=True)
        doc["tasks"][task] = derive_task(task, seeds, num_envs)
        for name, rec in doc["tasks"][task]["outputs"].items():
            print(f"  {name:6s} worst {rec['worst_abs_diff']:.3e} -> atol {rec['atol']:.2e}", file=sys.stderr)
    doc["seconds"] = round(time.perf_counter() - t0, 1)
    write_json(out, doc)
    print(f"wrote {out} ({doc['seconds']} s, loadavg {os.getloadavg()[0]:.1f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
