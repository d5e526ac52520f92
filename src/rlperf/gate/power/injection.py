"""The power study's arms: a known slowdown (or a null change) committed in a throw-away clone.

What is injected where is the target's (rlperf.gate.power.targets: walk, gpu-fused, motion-tracking,
replay-host, noise; one module each, one registry). Here: the size of each arm calibrated on this host
(chain_timing, every candidate in one fresh process, timed in turn), and the arms committed. The null arm
edits a comment of the same file: nothing measurable changes. The achieved size is the experiment's own
pairs' or passes' ratio, reported beside the nominal one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

from rlperf.asvtools.git import git
from rlperf.gate.power import chain_timing
from rlperf.gate.power.targets import TARGETS, Target, target


def clone_repo(repo: str, clone: str | None = None) -> str:
    """A throw-away local clone of `repo` (in `clone`, else a new temp folder) for the arm commits: they never
    touch the user's repository or its branches. The caller removes it."""
    clone = clone or tempfile.mkdtemp(prefix="gate-power-clone-")
    git(os.path.dirname(clone), "clone", "-q", "--local", os.path.abspath(repo), clone)
    return clone


def _commit(clone: str, base: str, text: str, message: str, path: str) -> str:
    git(clone, "checkout", "-q", "--detach", base)
    with open(os.path.join(clone, path), "w") as fh:
        fh.write(text)
    git(clone, "-c", "user.name=gate-power", "-c", "user.email=gate-power@localhost", "commit", "-q", "-am", message)
    return git(clone, "rev-parse", "HEAD")


def write_variants(folder: str, source: str, candidates: list[int], what: Target | None = None) -> dict[int, str]:
    """The target's file once per step count (0: unchanged) as module files in `folder`: {steps: module}."""
    what = what or TARGETS["walk"]
    modules = {}
    for steps in [0, *candidates]:
        modules[steps] = chain_timing.variant_module(what.name, steps)
        with open(os.path.join(folder, modules[steps] + ".py"), "w") as fh:
            fh.write(what.inject(source, steps) if steps else source)
    return modules


def calibrate(clone: str, sha: str, candidates: list[int], name: str = "walk") -> dict:
    """Median ratio per candidate step count, all variants in one fresh process, interleaved call by
    call (chain_timing), at commit `sha` of the clone: the clone's own workload times the variants."""
    what = target(name)
    git(clone, "checkout", "-q", "--detach", sha)
    with open(os.path.join(clone, what.path)) as fh:
        source = fh.read()
    variants, cache = tempfile.mkdtemp(prefix="gate-power-variants-"), tempfile.mkdtemp(prefix="gate-power-numba-")
    try:
        write_variants(variants, source, candidates, what)
        env = dict(os.environ, PYTHONPATH=os.path.join(clone, "src"), NUMBA_CACHE_DIR=cache)
        # run by path: the child imports only the clone's workload packages, whatever the clone's commit holds
        out = subprocess.run([sys.executable, chain_timing.__file__, "--variants", variants, "--target", what.name,
                              "--steps", ",".join(map(str, candidates))],
                             capture_output=True, text=True, env=env, cwd=clone)
    finally:
        shutil.rmtree(variants, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    if out.returncode != 0:
        raise RuntimeError(f"calibration failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def pick(sizes, ratios: dict) -> dict[float, int]:
    """Per nominal size, the candidate step count whose median ratio (chain_timing) is nearest 1 + size."""
    med = {int(k): v["median"] for k, v in ratios.items()}
    return {s: min(med, key=lambda k: (abs(med[k] - 1.0 - s), k)) for s in sizes}


def make_arms(clone: str, base: str, sizes, candidates: list[int] | None, dry_run: bool,
              fixed_steps: list[int] | None = None, target_name: str = "walk",
              null: bool = True) -> tuple[list[dict], dict]:
    """The null arm (unless `null` is False) and one arm per size, committed in the clone; steps
    calibrated unless dry_run or fixed (`candidates` None: the target's own).

    Calibration (chain_timing) times every candidate in one process, call by call in turn, and picks
    per size the candidate nearest 1 + size: a chain's cost is not linear in its length and differs by
    host. The experiment's own pairs report the size achieved in the gate."""
    what = target(target_name)
    candidates = list(candidates or what.candidates)
    with open(os.path.join(clone, what.path)) as fh:
        source = fh.read()
    if fixed_steps is not None:
        steps = dict(zip(sizes, fixed_steps))
        calibration = {"fixed_steps": fixed_steps}
    elif dry_run or not sizes:
        steps, calibration = {s: candidates[0] for s in sizes}, {"candidates": candidates}
    else:
        calibration = {"candidates": candidates, **calibrate(clone, base, candidates, what.name)}
        steps = pick(sizes, calibration["ratios"])
    calibration["target"], calibration["step"] = what.name, what.step
    arms = [{"arm": "null", "size": 0.0, "steps": 0,
             "sha": _commit(clone, base, what.null_edit(source), "[gate-power arm] null change", what.path)}] if null else []
    for size in sizes:
        arms.append({"arm": f"inject-{size:.0%}", "size": size, "steps": steps[size],
                     "sha": _commit(clone, base, what.inject(source, steps[size]), f"[gate-power arm] +{size:.0%}",
                                    what.path)})
    return arms, calibration


__all__ = ["calibrate", "clone_repo", "make_arms", "pick", "write_variants"]
