"""Detection power of `rlperf gate --run`: how often a known slowdown is caught, how often nothing is.

In a throw-away clone of the repository, on top of BASE (default HEAD):
  - one commit per size (default 5 %, 10 %, 20 %) injects a chain of dependent sqrt into every env of
    the g1_walk_flat kernel, multiplied into a reward term as `1 + chain * 0.0` (parity held: the
    kernel's fastmath leaves out nnan/ninf, so LLVM cannot drop it); the chain length is calibrated
    on this host, every candidate length timed in one process call by call (gate_power_steps.py;
    nominal size, the achieved one is reported);
  - a null commit edits a comment of the same kernel (nothing measurable changes).
Each trial runs the gate on every arm with a fresh results folder, so base and head are measured
afresh, interleaved, every time. Reported per arm: detection rate (the injected points flagged as
regressions), false-alarm rate per unchanged point and per gate run, each with a 95 % Wilson
interval; the coefficient of variation of the per-trial medians; samples per point; seconds per
gate run. JSON and Markdown, both written atomically, paths checked before anything runs.

    python scripts/gate_power.py --trials 60 --passes 3 --out-json out/power/power.json \
        --out-md out/power/power.md
    python scripts/gate_power.py --dry-run ...   # make the clone and commits, print the plan, measure nothing

It takes hours on a 2-vCPU box (minutes per gate run); run it outside CI, on a quiet machine.

`--blocks B` (the block design) buys many trials per hour. A gate run's fixed cost is its worktrees'
cold Numba compile (each worktree is a new path, so Numba's cache misses: ~20 s per commit), and one
trial of k passes costs that again. Instead, each block is ONE real `rlperf gate --run --passes N
--keep-passes DIR` session per arm (arms alternate block by block, so both see the same hours of
the box), and its N kept passes are cut into disjoint runs of k consecutive passes. Each run of k is
one trial, judged by the gate's own verdict path (`rlperf gate --no-run --passes-from`, as gate.yml's
verdict job judges), at every k of `--k` and every factor of `--factors`. Trials of one block share
the session's worktrees and compile, not their measurements.

    python scripts/gate_power.py --blocks 6 --passes-per-block 30 --k 3,5 --factors 1.05,1.07,1.10 \
        --sizes 0.10 --work-dir out/power/work --out-json out/power/power.json --out-md out/power/power.md
    python scripts/gate_power.py --resume --clone CLONE --work-dir out/power/work ...   # continue, or judge again

`--paired-seconds T` judges paired sampling instead of passes (gate.paired: base and head live in two
processes and are sampled in turn). Each session is one `rlperf gate --run --passes 1 --paired
N*T --keep-passes DIR`; every point's pairs are cut into N (`--trials-per-block`) consecutive,
disjoint runs of about T seconds, and each run is one trial, judged by `--passes-from` like the rest.

    python scripts/gate_power.py --blocks 2 --trials-per-block 30 --paired-seconds 5 --sizes 0.05,0.10,0.20 \
        --steps 2,5,10 --factors 1.03,1.05,1.07 --work-dir out/power/work --out-json ... --out-md ...
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from rlperf.errors import EXIT_USAGE, UsageError
from rlperf.gate.outputs import check_output_path, write_text_atomic
from rlperf.report.jsonio import write_json

KERNEL = "src/rlperf/envs/walk/fused.py"
ANCHOR = "            ex = commands[i, 0] - linvel[i, 0]\n"
TERM_VALUE = "math.exp(-(ex * ex + ey * ey) / sigma) if s[T_LIN] != 0.0 else F0"
TERM = f"            t_lin = {TERM_VALUE}\n"
DEFAULT_BENCH = r"EnvFused\.time_fused\('(g1_walk_flat|probe)', 8192, [12]\)"
DEFAULT_INJECTED = r"'g1_walk_flat'"
# --target gpu-fused: extra tiny launches on the fused GPU gather's stream (a real regression's shape:
# one more kernel per sample), results unchanged (idx + 0)
GPU_FILE = "src/rlperf/replay/placements/gpu.py"
GPU_ANCHOR = "               np.uint64(self.sampler.seed), np.uint64(self.sampler.next_tick()))\n"
GPU_BENCH = r"ReplayGpuSample\.track_ms\(20, '(gpu-fused|gpu)', 1\)"
GPU_INJECTED = r"'gpu-fused'"


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion hits/n ((0, 1) for n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def cv(values) -> float | None:
    """Coefficient of variation (stdev / mean) of `values`, None with fewer than two."""
    values = [v for v in values if v is not None]
    if len(values) < 2 or statistics.mean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.mean(values)


def inject(source: str, steps: int) -> str:
    """The walk kernel with `steps` dependent sqrt per env folded into a reward term as `1 + x * 0.0`."""
    if source.count(ANCHOR) != 1 or source.count(TERM) != 1:
        raise UsageError(f"{KERNEL}: the injection anchors are not found once each; update scripts/gate_power.py")
    # seeded by the env index so LLVM cannot hoist the chain out of the env loop; always finite
    chain = (f"            spin = 1.0 + float(i)\n            for _ in range({steps}):  # injected by gate_power.py\n"
             "                spin = math.sqrt(spin + 1.0)\n")
    return source.replace(ANCHOR, chain + ANCHOR).replace(
        TERM, f"            t_lin = ({TERM_VALUE}) * (1.0 + spin * 0.0)\n")


def inject_gpu(source: str, steps: int) -> str:
    """The fused GPU gather with `steps` more launches per sample (`idx.add_(0)`: 256 KiB, same result)."""
    if source.count(GPU_ANCHOR) != 1:
        raise UsageError(f"{GPU_FILE}: the injection anchor is not found once; update scripts/gate_power.py")
    extra = (f"        for _ in range({steps}):  # injected by gate_power.py\n"
             "            self.idx.add_(0)\n")
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + extra)


def null_edit_gpu(source: str) -> str:
    if source.count(GPU_ANCHOR) != 1:
        raise UsageError(f"{GPU_FILE}: the anchor is not found; update scripts/gate_power.py")
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + "        # null change by gate_power.py\n")


def null_edit(source: str) -> str:
    """The walk kernel with one more comment line: a commit that changes nothing measurable."""
    if source.count(ANCHOR) != 1:
        raise UsageError(f"{KERNEL}: the anchor is not found; update scripts/gate_power.py")
    return source.replace(ANCHOR, "            # null change by gate_power.py\n" + ANCHOR)


def _git(repo: str, *args: str) -> str:
    out = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.strip()


def _commit(clone: str, base: str, text: str, message: str, path: str = KERNEL) -> str:
    _git(clone, "checkout", "-q", "--detach", base)
    with open(os.path.join(clone, path), "w") as fh:
        fh.write(text)
    _git(clone, "-c", "user.name=gate-power", "-c", "user.email=gate-power@localhost", "commit", "-q", "-am", message)
    return _git(clone, "rev-parse", "HEAD")


def calibrate(clone: str, sha: str, candidates: list[int]) -> dict:
    """Median ratio per candidate chain length, all variants in one process, interleaved call by call
    (scripts/gate_power_steps.py), at commit `sha` of the clone."""
    _git(clone, "checkout", "-q", "--detach", sha)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate_power_steps.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(clone, "src"),
               NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="gate-power-numba-"))
    out = subprocess.run([sys.executable, script, "--repo", clone, "--steps", ",".join(map(str, candidates))],
                         capture_output=True, text=True, env=env, cwd=clone)
    if out.returncode != 0:
        raise RuntimeError(f"calibration failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def pick(sizes, ratios: dict) -> dict[float, int]:
    """Per nominal size, the candidate chain length whose median ratio (gate_power_steps) is nearest
    1 + size."""
    med = {int(k): v["median"] for k, v in ratios.items()}
    return {s: min(med, key=lambda k: (abs(med[k] - 1.0 - s), k)) for s in sizes}


TARGETS = {  # what --target edits: (file, inject, null edit, default --bench, default --injected)
    "walk": (KERNEL, inject, null_edit, DEFAULT_BENCH, DEFAULT_INJECTED),
    "gpu-fused": (GPU_FILE, inject_gpu, null_edit_gpu, GPU_BENCH, GPU_INJECTED),
}


def make_arms(clone: str, base: str, sizes, candidates: list[int], dry_run: bool,
              fixed_steps: list[int] | None = None, target: str = "walk",
              null: bool = True) -> tuple[list[dict], dict]:
    """The null arm (unless `null` is False) and one arm per size, committed in the clone; steps
    calibrated unless dry_run or fixed.

    Calibration (gate_power_steps) times every candidate chain in one process, call by call in turn,
    and picks per size the candidate nearest 1 + size: the chain's cost is not linear in its length
    and differs by host. The experiment's own pairs report the size achieved in the gate."""
    path, inject_fn, null_fn, _, _ = TARGETS[target]
    with open(os.path.join(clone, path)) as fh:
        source = fh.read()
    if fixed_steps is not None:
        steps = dict(zip(sizes, fixed_steps))
        calibration = {"fixed_steps": fixed_steps}
    elif dry_run or not sizes:
        steps, calibration = {s: candidates[0] for s in sizes}, {"candidates": candidates}
    else:
        calibration = {"candidates": candidates, **calibrate(clone, base, candidates)}
        steps = pick(sizes, calibration["ratios"])
    arms = [{"arm": "null", "size": 0.0, "steps": 0,
             "sha": _commit(clone, base, null_fn(source), "[gate-power arm] null change", path)}] if null else []
    for size in sizes:
        arms.append({"arm": f"inject-{size:.0%}", "size": size, "steps": steps[size],
                     "sha": _commit(clone, base, inject_fn(source, steps[size]), f"[gate-power arm] +{size:.0%}",
                                    path)})
    return arms, calibration


def judge_config(clone: str) -> str:
    """A gate config with no [[rule]]: the factor under study (--factor / --factors) applies to every
    point, where the repository's rules would override it (gate.toml gives bench_replay x1.30)."""
    path = os.path.join(clone, ".gate-power.toml")
    if not os.path.isfile(path):
        with open(path, "w") as fh:
            fh.write("# written by scripts/gate_power.py: no [[rule]], so --factor applies to every point\n"
                     "[gate]\nfactor = 1.10\npasses = 3\n")
    return path


def gate_command(clone: str, base: str, head: str, args, results_dir: str, verdict: str) -> list[str]:
    return [sys.executable, "-m", "rlperf", "gate", "--repo", clone, "--base", base, "--head", head, "--run",
            "--passes", str(args.passes), "--bench", args.bench, "--machine", args.machine,
            "--results-dir", results_dir, "--config", judge_config(clone),
            *(["--factor", str(args.factor)] if args.factor else []), "--out-json", verdict]


def samples_per_point(results_dir: str, machine: str, sha: str) -> list[int]:
    from rlperf.gate.results import load_points

    return [len(p.samples or []) for p in load_points(results_dir, machine, sha).values() if p.measured]


def run_trial(clone: str, base: str, arm: dict, args) -> dict:
    """One gate run on a fresh results folder; returns what the summary needs."""
    scratch = tempfile.mkdtemp(prefix="gate-power-trial-")
    try:
        verdict_path = os.path.join(scratch, "verdict.json")
        cmd = gate_command(clone, base, arm["sha"], args, os.path.join(scratch, "results"), verdict_path)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=clone)
        seconds = time.perf_counter() - start
        if not os.path.isfile(verdict_path):
            raise RuntimeError(f"gate wrote no verdict (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(verdict_path) as fh:
            verdict = json.load(fh)
        samples = samples_per_point(os.path.join(scratch, "results"), args.machine, arm["sha"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"arm": arm["arm"], "exit_code": verdict["exit_code"], "seconds": seconds, "samples": samples,
            "points": {f["name"]: {"status": f["status"], "ratio": f["ratio"], "base": f["base"]}
                       for f in verdict["findings"] if f["base"] is not None}}


def run_session(clone: str, base: str, arm: dict, args, session_dir: str) -> dict:
    """One real gate session of `--passes-per-block` interleaved passes, every pass kept in session_dir."""
    os.makedirs(session_dir)
    cmd = gate_command(clone, base, arm["sha"], args, os.path.join(session_dir, "record"),
                       os.path.join(session_dir, "verdict.json"))
    if args.paired_seconds:
        cmd[cmd.index("--passes") + 1] = "1"
        # one fresh pair of workers per trial, as one real gate run of --paired-seconds has
        cmd += ["--paired", str(args.paired_seconds * args.trials_per_block),
                "--paired-restarts", str(args.trials_per_block * args.restarts_per_trial)]
    else:
        cmd[cmd.index("--passes") + 1] = str(args.passes_per_block)
    cmd += ["--keep-passes", os.path.join(session_dir, "passes")]
    load_before, start = os.getloadavg(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=clone)
    info = {"arm": arm["arm"], "sha": arm["sha"], "exit_code": proc.returncode,
            "seconds": time.perf_counter() - start, "loadavg_before": load_before, "loadavg_after": os.getloadavg()}
    with open(os.path.join(session_dir, "gate.log"), "w") as fh:
        fh.write(proc.stdout + proc.stderr)
    write_json(os.path.join(session_dir, "session.json"), info)
    return info


def trial_folders(passes_dir: str, k: int, scratch: str) -> list[str]:
    """Disjoint runs of k consecutive kept passes, each as a passes folder of its own (links to the passes)."""
    with open(os.path.join(passes_dir, "passes.json")) as fh:
        doc = json.load(fh)
    out = []
    for t in range(len(doc["order"]) // k):
        folder = os.path.join(scratch, f"k{k}-t{t}")
        os.makedirs(folder)
        for j in range(k):
            os.symlink(os.path.join(os.path.abspath(passes_dir), f"pass-{t * k + j}"), os.path.join(folder, f"pass-{j}"))
        write_json(os.path.join(folder, "passes.json"), {**doc, "order": doc["order"][t * k:(t + 1) * k]})
        out.append(folder)
    return out


def trial_pairs(point, trials: int, t: int):
    """Trial t of `trials` of one point's kept pairs: its own pairs of workers' segments when the session
    ran R per trial (--paired-restarts trials*R), else the t-th of `trials` equal consecutive runs."""
    from rlperf.gate import paired

    if point.segments and len(point.segments) % trials == 0:  # R = len / trials pairs of workers per trial
        per = len(point.segments) // trials
        lo = sum(point.segments[:t * per])
        hi = lo + sum(point.segments[t * per:(t + 1) * per])
    else:
        size = len(point.pairs) // trials
        lo, hi = t * size, (t + 1) * size
    return paired.PointPairs(name=point.name, number=point.number, kind=point.kind, pairs=point.pairs[lo:hi],
                             skipped=point.skipped, error=point.error)


def paired_trial_folders(passes_dir: str, trials: int, scratch: str) -> list[str]:
    """Every point's kept pairs cut into `trials` consecutive, disjoint runs, each a passes folder of its own
    (the session's single pass linked, paired.json holding that run's pairs only)."""
    from rlperf.gate import paired

    spec, points, meta = paired.load(os.path.join(passes_dir, "paired.json"))
    out = []
    for t in range(trials):
        folder = os.path.join(scratch, f"paired-t{t}")
        os.makedirs(folder)
        os.symlink(os.path.join(os.path.abspath(passes_dir), "pass-0"), os.path.join(folder, "pass-0"))
        shutil.copy2(os.path.join(passes_dir, "passes.json"), os.path.join(folder, "passes.json"))
        chunks = [trial_pairs(p, trials, t) for p in points]
        paired.save(os.path.join(folder, "paired.json"), chunks, spec, **meta)
        out.append(folder)
    return out


def confirm_trial(t: int, trials: int, offset: int) -> int | None:
    """The trial whose pairs stand in for trial t's confirming round: `offset` later, else `offset`
    earlier, else none (a session too short for the offset)."""
    other = t + offset if t + offset < trials else t - offset
    return other if other >= 0 else None


def confirm_folder(passes_dir: str, trials: int, t: int, names, scratch: str, offset: int = 1) -> str:
    """Trial t's passes folder with a confirming round (`--paired-confirm 1`, gate.interleave._confirm)
    for the points in `names`: the pairs of the trial `offset` later (t + offset; past the end,
    t - offset) join theirs, as the gate's own round of fresh worker pairs would. The gate confirms
    after every paired point had its first round, so with P points paired the round comes about
    P point-times later: offset 1 is a gate pairing one point, larger offsets one pairing many."""
    from rlperf.gate import paired

    spec, points, meta = paired.load(os.path.join(passes_dir, "paired.json"))
    other = confirm_trial(t, trials, offset)
    folder = os.path.join(scratch, f"paired-t{t}-confirmed-{offset}")
    os.makedirs(folder)
    os.symlink(os.path.join(os.path.abspath(passes_dir), "pass-0"), os.path.join(folder, "pass-0"))
    shutil.copy2(os.path.join(passes_dir, "passes.json"), os.path.join(folder, "passes.json"))
    chunks = []
    for p in points:
        chunk = trial_pairs(p, trials, t)
        if p.name in names and other is not None:
            more = trial_pairs(p, trials, other)
            chunk.pairs += more.pairs
            chunk.confirm_rounds = 1
        chunks.append(chunk)
    paired.save(os.path.join(folder, "paired.json"), chunks, spec, **meta)
    return folder


def judge_trial(clone: str, base: str, arm: dict, args, passes: str, record: str, factor: float) -> dict:
    """The gate's verdict path on one trial's passes, in process (rlperf gate --no-run --passes-from)."""
    from rlperf.cli import main as rlperf_main

    verdict_path = os.path.join(passes, f"verdict-{factor}.json")
    cmd = ["gate", "--repo", clone, "--base", base, "--head", arm["sha"], "--no-run", "--passes-from", passes,
           "--results-dir", record, "--machine", args.machine, "--config", judge_config(clone),
           "--bench", args.bench, "--factor", str(factor), "--out-json", verdict_path]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = rlperf_main(cmd)
    if not os.path.isfile(verdict_path):
        raise RuntimeError(f"the gate judged {passes} without a verdict (exit {code})")
    with open(verdict_path) as fh:
        verdict = json.load(fh)
    return {"exit_code": verdict["exit_code"],
            "points": {f["name"]: {"status": f["status"], "ratio": f["ratio"], "base": f["base"]}
                       for f in verdict["findings"] if f["base"] is not None}}


def judge_sessions(clone: str, base: str, arms: list[dict], args, sessions: list[dict]) -> list[dict]:
    """Every session's kept passes cut into trials of each k, judged at each factor."""
    by_arm = {a["arm"]: a for a in arms}
    trials = []
    for s in sessions:
        passes = os.path.join(s["dir"], "passes")
        if not os.path.isfile(os.path.join(passes, "passes.json")):
            print(f"gate_power: {s['dir']} kept no passes (gate exit {s['exit_code']}); left out", file=sys.stderr)
            continue
        samples = samples_per_point(os.path.join(passes, "pass-0"), args.machine, s["sha"])
        for k in ([0] if args.paired_seconds else args.k):  # k 0: paired trials
            scratch = tempfile.mkdtemp(prefix="gate-power-judge-")
            try:
                folders = (paired_trial_folders(passes, args.trials_per_block, scratch) if k == 0
                           else trial_folders(passes, k, scratch))
                seconds = _trial_seconds(s, args) if k == 0 else s["seconds"] * k / s["passes"]
                for index, folder in enumerate(folders):
                    for factor in args.factors:
                        record = os.path.join(s["dir"], "record")
                        judged = judge_trial(clone, base, by_arm[s["arm"]], args, folder, record, factor)
                        row = {"arm": s["arm"], "k": k, "factor": factor, "block": s["block"],
                               "trial_in_block": index, "seconds": seconds, "samples": samples}
                        trials.append({**row, "confirm": 0, "screen": 1.0, **judged})
                        for offset, screen in (confirm_designs(args) if k == 0 else []):
                            trials.append({**row, "confirm": offset, "screen": screen, **_confirmed(
                                clone, base, by_arm[s["arm"]], args, judged, (passes, index, scratch, offset),
                                record, factor, screen)})
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return trials


def confirm_designs(args) -> list[tuple[int, float]]:
    """(offset, screen) of every confirming design --confirm and --screens ask for."""
    return [(offset, screen) for offset in args.confirm for screen in args.screens]


def _confirmed(clone: str, base: str, arm: dict, args, judged: dict, where: tuple, record: str, factor: float,
               screen: float) -> dict:
    """The trial's verdict after one confirming round (`--paired-confirm 1 --paired-screen SCREEN`):
    unchanged when nothing passed the screen, else those points judged again on their pairs and
    those of the trial `offset` later (confirm_folder). where: (passes dir, trial, scratch, offset)."""
    from rlperf.gate.judge import worth_confirming

    passes, index, scratch, offset = where
    flagged = {name for name, p in judged["points"].items()
               if worth_confirming(p["status"], p["ratio"], factor, screen)}
    if not flagged:
        return {**judged, "confirmed": []}
    folder = confirm_folder(passes, args.trials_per_block, index, flagged, scratch, offset)
    again = judge_trial(clone, base, arm, args, folder, record, factor)
    shutil.rmtree(folder, ignore_errors=True)
    return {**again, "confirmed": sorted(flagged)}


def _trial_seconds(session: dict, args) -> float | None:
    """What one paired gate run would take: the session's fixed part (worktrees, one asv pass per side)
    plus one trial's share of each point's paired wall time (start-ups included); None when the kept
    pairs carry no wall time (sessions before gate.paired recorded it)."""
    from rlperf.gate import paired

    _, points, _ = paired.load(os.path.join(session["dir"], "passes", "paired.json"))
    walls = [p.wall for p in points]
    if not all(walls):
        return None
    return max(session["seconds"] - sum(walls), 0.0) + sum(walls) / args.trials_per_block


def per_pass_ratios(sessions: list[dict], ratios_of: list[dict]) -> dict:
    """Per arm and point, the ratio head/base of every kept pass (ratios_of[i]: session i's
    session_ratios): the noise a trial's median works against."""
    out: dict = {}
    for s, ratios in zip(sessions, ratios_of):
        for name, values in ratios.items():
            out.setdefault(s["arm"], {}).setdefault(name, []).extend(values)
    return out


def session_ratios(session: dict, args) -> dict:
    """{point: [head/base per kept pass, or per paired block]} of one session (empty when it kept none)."""
    from rlperf.gate.passdir import load

    passes = os.path.join(session["dir"], "passes")
    if not os.path.isfile(os.path.join(passes, "passes.json")):
        return {}
    if os.path.isfile(os.path.join(passes, "paired.json")):
        from rlperf.gate import paired

        spec, points, _ = paired.load(os.path.join(passes, "paired.json"))
        return {p.name: [h / b for b, h in p.blocks(spec.block) if b] for p in points if p.pairs}
    with open(os.path.join(passes, "passes.json")) as fh:
        doc = json.load(fh)
    out: dict = {}
    for base_res, head_res in load(passes, doc["base"], doc["head"], args.machine).runs:
        heads = {name: p for (_, name), p in head_res.points.items()}
        for (_, name), p in base_res.points.items():
            h = heads.get(name)
            if p.measured and h is not None and h.measured and p.value:
                out.setdefault(name, []).append(h.value / p.value)
    return out


def summarize(arms: list[dict], trials: list[dict], injected: str) -> list[dict]:
    """Per arm: detection (injected points flagged), false alarms per unchanged point and per run."""
    pattern = re.compile(injected)
    rows = []
    for arm in arms:
        mine = [t for t in trials if t["arm"] == arm["arm"]]
        hits = n_inj = alarms = n_other = runs_alarmed = 0
        ratios, base_medians = [], {}
        for t in mine:
            run_alarm = False
            for name, p in t["points"].items():
                flagged = p["status"] == "regression"
                base_medians.setdefault(name, []).append(p["base"])
                if arm["size"] > 0 and pattern.search(name):
                    n_inj, hits = n_inj + 1, hits + flagged
                    ratios.append(p["ratio"])
                else:
                    n_other, alarms = n_other + 1, alarms + flagged
                    run_alarm |= flagged
            runs_alarmed += run_alarm
        cvs = {name: cv(v) for name, v in base_medians.items()}
        rows.append({
            "arm": arm["arm"], "nominal_size": arm["size"], "steps": arm["steps"], "trials": len(mine),
            "detection": None if arm["size"] == 0 else {
                "hits": hits, "n": n_inj, "rate": hits / n_inj if n_inj else None, "wilson95": wilson(hits, n_inj)},
            "achieved_median_ratio": statistics.median(r for r in ratios if r is not None) if ratios else None,
            "false_alarms_per_point": {"hits": alarms, "n": n_other, "rate": alarms / n_other if n_other else None,
                                       "wilson95": wilson(alarms, n_other)},
            "false_alarms_per_run": {"hits": runs_alarmed, "n": len(mine),
                                     "rate": runs_alarmed / len(mine) if mine else None,
                                     "wilson95": wilson(runs_alarmed, len(mine))},
            "cv_of_base_medians": {k: v for k, v in sorted(cvs.items())},
            "samples_per_point": sorted({s for t in mine for s in t["samples"]}),
            "seconds_per_gate_run": (statistics.median(t["seconds"] for t in mine)
                                     if mine and all(t["seconds"] is not None for t in mine) else None),
        })
    return rows


def _short(name: str) -> str:
    """bench_env.EnvFused.time_fused('probe', 8192, 2) -> probe 8192/2."""
    m = re.search(r"\('([^']+)', (\d+), (\d+)\)", name)
    return f"{m.group(1)} {m.group(2)}/{m.group(3)}" if m else name


def _pct(cell: dict | None) -> str:
    if not cell or cell["rate"] is None:
        return "n/a"
    lo, hi = cell["wilson95"]
    return f"{cell['rate']:.1%} ({cell['hits']}/{cell['n']}; 95 % CI {lo:.1%}–{hi:.1%})"


def to_markdown(doc: dict) -> str:
    design = (f"block design: {doc['blocks']} block(s) of one gate session per arm with {doc['passes_per_block']} "
              "kept passes, cut into disjoint trials of k passes" if doc.get("blocks")
              else f"{doc['passes']} interleaved passes per gate run")
    if doc.get("paired_seconds"):
        design = (f"paired block design: {doc['blocks']} block(s) of one gate session per arm (1 asv pass, then "
                  f"paired sampling), each point's pairs cut into {doc['trials_per_block']} disjoint trials of "
                  f"about {doc['paired_seconds']:g} s from {doc.get('restarts_per_trial', 1)} fresh pair(s) of worker "
                  "processes each (k 0 in the table = paired; `0 + confirm@K`: a trial's flagged points, or with "
                  "`screen S` those above 1 + S x (factor - 1), judged again with the pairs of the trial K later "
                  "joined, as `--paired-confirm 1 --paired-screen S` would)")
    lines = ["# Gate detection power", "", f"command: `{doc['command']}`", "",
             f"machine: `{doc['machine']}`; base `{doc['base'][:12]}`; {design}; "
             f"bench `{doc['bench']}`; injected points `{doc['injected']}`", "",
             "| arm | k | factor | steps | trials | detection | achieved median ratio | false alarms / point "
             "| false alarms / run | samples/point | s per gate run |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["arms"]:
        ratio = "" if r["achieved_median_ratio"] is None else f"×{r['achieved_median_ratio']:.3f}"
        secs = "" if r["seconds_per_gate_run"] is None else f"{r['seconds_per_gate_run']:.0f}"
        factor = r.get("factor") or doc.get("factor") or "gate.toml"
        k = r.get("k", doc.get("passes"))
        if r.get("confirm"):
            k = f"{k} + confirm@{r['confirm']}" + (f" screen {r['screen']:g}" if r.get("screen", 1.0) < 1 else "")
        lines.append(f"| {r['arm']} | {k} | {factor} | {r['steps']} | {r['trials']} | "
                     f"{_pct(r['detection'])} | {ratio} | "
                     f"{_pct(r['false_alarms_per_point'])} | {_pct(r['false_alarms_per_run'])} | "
                     f"{','.join(map(str, r['samples_per_point']))} | {secs} |")
    null = next((r for r in doc["arms"] if r["arm"] == "null"), None)
    if null and null["cv_of_base_medians"]:
        lines += ["", "Coefficient of variation of the base medians across null trials:", "",
                  "| point | CV |", "|---|---|"]
        lines += [f"| `{k}` | {'n/a' if v is None else f'{v:.2%}'} |" for k, v in null["cv_of_base_medians"].items()]
    if doc.get("per_pass_ratios"):
        what = ("Per-block ratios head/base (blocks of paired samples: the noise each trial's median works against):"
                if doc.get("paired_seconds") else
                "Single-pass ratios head/base (the noise each trial's median of k works against):")
        lines += ["", what, "",
                  "| arm | point | passes | median | CV | share above ×1.05 | share above ×1.10 |",
                  "|---|---|---|---|---|---|---|"]
        for arm, points in doc["per_pass_ratios"].items():
            for name, ratios in sorted(points.items()):
                above = {f: sum(r > f for r in ratios) / len(ratios) for f in (1.05, 1.10)}
                spread = cv(ratios)
                lines.append(f"| {arm} | `{name}` | {len(ratios)} | ×{statistics.median(ratios):.3f} | "
                             f"{'n/a' if spread is None else f'{spread:.1%}'} | {above[1.05]:.1%} | {above[1.10]:.1%} |")
    if doc.get("sessions"):
        lines += ["", "Sessions (one real `rlperf gate --run` each; the median of its per-pass ratios per point "
                  "shows what more passes converge to in that session):", "",
                  "| block | arm | gate exit | seconds | load before | load after | median per-pass ratio |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {x['block']} | {x['arm']} | {x['exit_code']} | {x['seconds']:.0f} | "
                  f"{x['loadavg_before'][0]:.2f} | {x['loadavg_after'][0]:.2f} | "
                  + ", ".join(f"{_short(n)} ×{v:.3f}" for n, v in sorted(x.get("median_pass_ratio", {}).items())) + " |"
                  for x in doc["sessions"]]
    return "\n".join(lines) + "\n"


def run_blocks(clone: str, base: str, arms: list[dict], args, sessions: list[dict]) -> dict:
    """The block design: sessions (arms alternating, shuffled per block) after those already kept
    (`sessions`, from --resume), then every trial judged."""
    work = os.path.abspath(args.work_dir or tempfile.mkdtemp(prefix="gate-power-work-"))
    os.makedirs(work, exist_ok=True)
    order, start, sessions = random.Random(args.seed), time.time(), list(sessions)
    first = 1 + max((x["block"] for x in sessions), default=-1)
    for block in range(first, args.blocks):
        if args.deadline_min and time.time() - start > args.deadline_min * 60:
            print(f"gate_power: deadline reached after {block} block(s)", file=sys.stderr, flush=True)
            break
        for arm in order.sample(arms, len(arms)):
            what = (f"1 pass, {args.trials_per_block} x {args.paired_seconds:g} s of pairs per point"
                    if args.paired_seconds else f"{args.passes_per_block} passes")
            print(f"gate_power: block {block + 1}/{args.blocks} {arm['arm']} ({what})", file=sys.stderr, flush=True)
            folder = os.path.join(work, f"block{block}-{arm['arm']}")
            info = run_session(clone, base, arm, args, folder)
            sessions.append({**info, "block": block, "dir": folder, "passes": args.passes_per_block})
            write_json(os.path.join(work, "sessions.json"), {"base": base, "arms": arms, "sessions": sessions})
    trials = judge_sessions(clone, base, arms, args, sessions)
    rows = []
    for k in ([0] if args.paired_seconds else args.k):
        for confirm, screen in [(0, 1.0), *(confirm_designs(args) if k == 0 else [])]:
            for factor in args.factors:
                mine = [t for t in trials if t["k"] == k and t["factor"] == factor
                        and (t.get("confirm", 0), t.get("screen", 1.0)) == (confirm, screen)]
                rows += [{**r, "k": k, "factor": factor, "confirm": confirm, "screen": screen}
                         for r in summarize(arms, mine, args.injected)]
    ratios_of = [session_ratios(x, args) for x in sessions]
    return {"blocks": args.blocks, "passes_per_block": args.passes_per_block, "work_dir": work,
            "paired_seconds": args.paired_seconds, "trials_per_block": args.trials_per_block,
            "restarts_per_trial": args.restarts_per_trial,
            "sessions": [{**{k: v for k, v in x.items() if k != "dir"},
                          "median_pass_ratio": {n: statistics.median(r) for n, r in ratios.items()}}
                         for x, ratios in zip(sessions, ratios_of)],
            "per_pass_ratios": per_pass_ratios(sessions, ratios_of), "arms": rows, "trials": trials}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", default=".", help="repository to clone (default: .)")
    p.add_argument("--base", default="HEAD", help="commit the arms are made on (default: HEAD)")
    p.add_argument("--trials", type=int, default=60, help="gate runs per arm (default 60)")
    p.add_argument("--sizes", default="0.05,0.10,0.20", help="nominal slowdowns (default 0.05,0.10,0.20)")
    p.add_argument("--passes", type=int, default=3, help="interleaved passes per gate run (default 3)")
    p.add_argument("--factor", type=float, help="gate factor (default: the clone's gate.toml)")
    p.add_argument("--target", default="walk", choices=sorted(TARGETS),
                   help="what the arms edit: the walk kernel (default) or the fused GPU gather (needs --steps)")
    p.add_argument("--bench", help="points the gate measures (default: the target's)")
    p.add_argument("--injected", help="regex of the points the injection slows (default: the target's)")
    p.add_argument("--machine", default="gate-power", help="asv machine name for the throw-away results")
    p.add_argument("--candidate-steps", default="2,3,4,5,6,7,8,10,12,16",
                   help="chain lengths the calibration measures, in one process (default 2,3,4,5,6,7,8,10,12,16)")
    p.add_argument("--steps", help="pin the chain length per --sizes value (comma-separated, one each) "
                                   "instead of calibrating")
    p.add_argument("--seed", type=int, default=0, help="shuffles the arm order within each trial")
    p.add_argument("--out-json", required=True)
    p.add_argument("--out-md", required=True)
    p.add_argument("--dry-run", action="store_true", help="make the clone and commits, print the plan, no runs")
    p.add_argument("--no-null", action="store_true",
                   help="injected arms only (detection at more sizes, when a run's null arm already measured "
                        "false alarms)")
    p.add_argument("--null-only", action="store_true",
                   help="the null arm only (more false-alarm trials, e.g. a hold-out for a design chosen on "
                        "earlier ones)")
    p.add_argument("--blocks", type=int, default=0,
                   help="block design: this many gate sessions per arm, each cut into trials (default 0: one gate run per trial)")
    p.add_argument("--passes-per-block", type=int, default=30, help="kept passes per session (default 30)")
    p.add_argument("--k", default="3,5", help="block design: passes per trial, comma-separated (default 3,5)")
    p.add_argument("--factors", default="1.05,1.07,1.10", help="block design: gate factors judged (default 1.05,1.07,1.10)")
    p.add_argument("--work-dir", help="block design: keep every session here (absent or empty; default: a temp folder)")
    p.add_argument("--resume", action="store_true",
                   help="block design: continue the run kept in --work-dir (its sessions.json) in its --clone")
    p.add_argument("--clone", help="with --resume: the interrupted run's clone (holds the arm commits)")
    p.add_argument("--paired-seconds", type=float, default=0.0,
                   help="block design: judge paired sampling, T seconds per point per trial (default 0: passes)")
    p.add_argument("--trials-per-block", type=int, default=30,
                   help="with --paired-seconds: trials each session is cut into (default 30)")
    p.add_argument("--restarts-per-trial", type=int, default=1,
                   help="with --paired-seconds: fresh pairs of workers per trial, as --paired-restarts in one "
                        "gate run (default 1)")
    p.add_argument("--confirm", metavar="OFFSETS",
                   help="with --paired-seconds: also judge every trial as `rlperf gate --paired-confirm 1` "
                        "would, the pairs of the trial K later standing in for the confirming round, for each K "
                        "of OFFSETS (comma-separated; 1: right after, as a gate pairing one point)")
    p.add_argument("--screens", default="1",
                   help="with --confirm: the --paired-screen shares to judge (comma-separated, in (0, 1]; "
                        "default 1)")
    p.add_argument("--deadline-min", type=float, default=0.0,
                   help="block design: start no session after this many minutes (0: no deadline)")
    args = p.parse_args(argv)
    args.bench = args.bench or TARGETS[args.target][3]
    args.injected = args.injected or TARGETS[args.target][4]
    try:
        args.sizes = [float(s) for s in args.sizes.split(",")]
    except ValueError:
        raise UsageError(f"--sizes {args.sizes!r}: give comma-separated fractions, e.g. 0.05,0.10,0.20") from None
    if not all(0 < s < 10 for s in args.sizes):
        raise UsageError("--sizes: each size must be a fraction > 0 (0.10 = 10 %)")
    if args.null_only and args.no_null:
        raise UsageError("--null-only and --no-null exclude each other")
    if args.null_only:
        args.sizes = []
    try:
        args.k = [int(v) for v in args.k.split(",")]
        args.factors = [float(v) for v in args.factors.split(",")]
    except ValueError:
        raise UsageError("--k takes integers (3,5), --factors numbers (1.05,1.10)") from None
    if not all(k >= 1 for k in args.k) or not all(math.isfinite(f) and f > 1 for f in args.factors):
        raise UsageError("--k must be >= 1 and every --factors value finite and > 1")
    if args.steps is not None:
        try:
            args.steps = [int(v) for v in args.steps.split(",")]
        except ValueError:
            raise UsageError(f"--steps {args.steps!r}: give whole numbers, one per --sizes value") from None
        if len(args.steps) != len(args.sizes) or min(args.steps) < 1:
            raise UsageError(f"--steps: give one chain length >= 1 per --sizes value ({len(args.sizes)})")
    if args.target != "walk" and args.steps is None and not args.resume:
        raise UsageError(f"--target {args.target}: give --steps (only the walk kernel calibrates its chain)")
    try:
        args.confirm = [int(v) for v in args.confirm.split(",")] if args.confirm else []
        args.screens = [float(v) for v in args.screens.split(",")]
    except ValueError:
        raise UsageError("--confirm takes whole numbers (1,15), --screens numbers (1,0.6)") from None
    if args.confirm and not args.paired_seconds:
        raise UsageError("--confirm applies to --paired-seconds (a confirming round re-samples pairs)")
    if any(k < 1 or k >= args.trials_per_block for k in args.confirm) or not all(0 < v <= 1 for v in args.screens):
        raise UsageError("--confirm offsets must be >= 1 and below --trials-per-block; --screens in (0, 1]")
    if args.paired_seconds and not (math.isfinite(args.paired_seconds) and args.paired_seconds > 0 and args.blocks):
        raise UsageError("--paired-seconds must be a finite number > 0, with --blocks (the block design)")
    if args.blocks < 0:
        raise UsageError("--blocks must be >= 0")
    if args.resume:
        if not (args.work_dir and os.path.isfile(os.path.join(args.work_dir, "sessions.json"))
                and args.clone and os.path.isdir(os.path.join(args.clone, ".git"))):
            raise UsageError("--resume needs --work-dir holding sessions.json and --clone, the run's git clone")
    elif args.work_dir and os.path.exists(args.work_dir) and os.listdir(args.work_dir):
        raise UsageError(f"--work-dir {args.work_dir!r} is not empty; give an absent or empty folder")
    try:
        args.candidate_steps = sorted({int(v) for v in args.candidate_steps.split(",")})
    except ValueError:
        raise UsageError(f"--candidate-steps {args.candidate_steps!r}: give whole numbers >= 1") from None
    if not args.candidate_steps or args.candidate_steps[0] < 1:
        raise UsageError("--candidate-steps: give whole numbers >= 1")
    for flag in ("trials", "passes", "passes_per_block", "trials_per_block", "restarts_per_trial"):
        if getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1")
    for flag in ("bench", "injected"):
        try:
            re.compile(getattr(args, flag))
        except re.error as exc:
            raise UsageError(f"--{flag} is not a valid regular expression: {exc}") from None
    check_output_path(args.out_json, "--out-json")
    check_output_path(args.out_md, "--out-md")
    return args


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print(f"gate_power: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # argparse: --help (0) or a bad choice (2, its message already printed)
        return int(exc.code or 0)
    clone = os.path.abspath(args.clone) if args.resume else tempfile.mkdtemp(prefix="gate-power-clone-")
    try:
        saved = {"sessions": []}
        if args.resume:  # an interrupted run's sessions: same clone, base and arm commits
            with open(os.path.join(args.work_dir, "sessions.json")) as fh:
                saved = json.load(fh)
            base, arms, calibration = saved["base"], saved["arms"], {"resumed": True, "fixed_steps": args.steps}
        else:
            _git(os.path.dirname(clone), "clone", "-q", "--local", os.path.abspath(args.repo), clone)
            base = _git(os.path.abspath(args.repo), "rev-parse", args.base)
            arms, calibration = make_arms(clone, base, args.sizes, args.candidate_steps, args.dry_run, args.steps,
                                          args.target, null=not args.no_null)
        command = " ".join(["scripts/gate_power.py", *(argv if argv is not None else sys.argv[1:])])
        doc = {"schema": "rlperf.gate-power/1", "command": command,
               "machine": args.machine, "base": base, "passes": args.passes, "bench": args.bench,
               "injected": args.injected, "dry_run": args.dry_run, "calibration": calibration,
               "plan": [{**a, "command": " ".join(gate_command(clone, base, a["sha"], args, "<fresh>", "<verdict>"))}
                        for a in arms]}
        if args.blocks and not args.dry_run:
            doc.update(run_blocks(clone, base, arms, args, saved["sessions"]))
        else:
            trials = []
            order = random.Random(args.seed)
            for trial in range(0 if args.dry_run else args.trials):
                for arm in order.sample(arms, len(arms)):
                    print(f"gate_power: trial {trial + 1}/{args.trials} {arm['arm']}", file=sys.stderr, flush=True)
                    trials.append(run_trial(clone, base, arm, args))
            doc.update(arms=summarize(arms, trials, args.injected), trials=trials)
        write_json(args.out_json, doc)
        write_text_atomic(args.out_md, to_markdown(doc))
        print(to_markdown(doc))
    finally:
        if not args.resume:
            shutil.rmtree(clone, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
