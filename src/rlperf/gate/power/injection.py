"""The power study's arms: a known slowdown (or a null change) committed in a throw-away clone.

--target walk injects a chain of dependent sqrt into every env of the g1_walk_flat kernel, multiplied
into a reward term as `1 + chain * 0.0` (parity held: the kernel's fastmath leaves out nnan/ninf, so
LLVM cannot drop it); its length is calibrated on this host (chain_timing), nominal size in, the
achieved one reported. --target gpu-fused adds tiny launches on the fused GPU gather's stream (a real
regression's shape: one more kernel per sample), results unchanged (idx + 0). The null arm edits a
comment of the same file: nothing measurable changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from rlperf.asvtools.git import git
from rlperf.errors import UsageError
from rlperf.gate.power import chain_timing

KERNEL = "src/rlperf/envs/walk/fused.py"
ANCHOR = "            ex = commands[i, 0] - linvel[i, 0]\n"
TERM_VALUE = "math.exp(-(ex * ex + ey * ey) / sigma) if s[T_LIN] != 0.0 else F0"
TERM = f"            t_lin = {TERM_VALUE}\n"
DEFAULT_BENCH = r"EnvFused\.time_fused\('(g1_walk_flat|probe)', 8192, [12]\)"
DEFAULT_INJECTED = r"'g1_walk_flat'"
GPU_FILE = "src/rlperf/replay/placements/gpu.py"
# the fused launch (packed and compact layouts: one launch line since kernel_args was split out for the kernel probe)
GPU_ANCHOR = "        launch(self.kernel, self.stream, self.sample_rows, *self.kernel_args(self.sampler.next_tick()))\n"
GPU_BENCH = r"ReplayGpuSample\.track_ms\(20, '(gpu-fused|gpu)', 1\)"
GPU_INJECTED = r"'gpu-fused'"


def inject(source: str, steps: int) -> str:
    """The walk kernel with `steps` dependent sqrt per env folded into a reward term as `1 + x * 0.0`."""
    if source.count(ANCHOR) != 1 or source.count(TERM) != 1:
        raise UsageError(f"{KERNEL}: the injection anchors are not found once each; update rlperf/gate/power/injection.py")
    # seeded by the env index so LLVM cannot hoist the chain out of the env loop; always finite
    chain = (f"            spin = 1.0 + float(i)\n            for _ in range({steps}):  # injected by rlperf gate-power\n"
             "                spin = math.sqrt(spin + 1.0)\n")
    return source.replace(ANCHOR, chain + ANCHOR).replace(
        TERM, f"            t_lin = ({TERM_VALUE}) * (1.0 + spin * 0.0)\n")


def inject_gpu(source: str, steps: int) -> str:
    """The fused GPU gather with `steps` more launches per sample (`idx.add_(0)`: 256 KiB, same result)."""
    if source.count(GPU_ANCHOR) != 1:
        raise UsageError(f"{GPU_FILE}: the injection anchor is not found once; update rlperf/gate/power/injection.py")
    extra = (f"        for _ in range({steps}):  # injected by rlperf gate-power\n"
             "            self.idx.add_(0)\n")
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + extra)


def null_edit_gpu(source: str) -> str:
    if source.count(GPU_ANCHOR) != 1:
        raise UsageError(f"{GPU_FILE}: the anchor is not found; update rlperf/gate/power/injection.py")
    return source.replace(GPU_ANCHOR, GPU_ANCHOR + "        # null change by rlperf gate-power\n")


def null_edit(source: str) -> str:
    """The walk kernel with one more comment line: a commit that changes nothing measurable."""
    if source.count(ANCHOR) != 1:
        raise UsageError(f"{KERNEL}: the anchor is not found; update rlperf/gate/power/injection.py")
    return source.replace(ANCHOR, "            # null change by rlperf gate-power\n" + ANCHOR)


def clone_repo(repo: str, clone: str | None = None) -> str:
    """A throw-away local clone of `repo` (in `clone`, else a new temp folder) for the arm commits: they never
    touch the user's repository or its branches. The caller removes it."""
    clone = clone or tempfile.mkdtemp(prefix="gate-power-clone-")
    git(os.path.dirname(clone), "clone", "-q", "--local", os.path.abspath(repo), clone)
    return clone


def _commit(clone: str, base: str, text: str, message: str, path: str = KERNEL) -> str:
    git(clone, "checkout", "-q", "--detach", base)
    with open(os.path.join(clone, path), "w") as fh:
        fh.write(text)
    git(clone, "-c", "user.name=gate-power", "-c", "user.email=gate-power@localhost", "commit", "-q", "-am", message)
    return git(clone, "rev-parse", "HEAD")


def write_variants(folder: str, source: str, candidates: list[int]) -> dict[int, str]:
    """The walk kernel once per chain length (0: unchanged) as module files in `folder`: {steps: module}."""
    modules = {}
    for steps in [0, *candidates]:
        modules[steps] = f"{chain_timing.VARIANT_PREFIX}{steps}"
        with open(os.path.join(folder, modules[steps] + ".py"), "w") as fh:
            fh.write(inject(source, steps) if steps else source)
    return modules


def calibrate(clone: str, sha: str, candidates: list[int]) -> dict:
    """Median ratio per candidate chain length, all variants in one fresh process, interleaved call by
    call (chain_timing), at commit `sha` of the clone: the clone's own workload times the variants."""
    git(clone, "checkout", "-q", "--detach", sha)
    with open(os.path.join(clone, KERNEL)) as fh:
        source = fh.read()
    variants = tempfile.mkdtemp(prefix="gate-power-variants-")
    write_variants(variants, source, candidates)
    env = dict(os.environ, PYTHONPATH=os.path.join(clone, "src"),
               NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="gate-power-numba-"))
    # run by path: the child imports only the clone's rlperf.envs, whatever the clone's commit holds
    out = subprocess.run([sys.executable, chain_timing.__file__, "--variants", variants,
                          "--steps", ",".join(map(str, candidates))],
                         capture_output=True, text=True, env=env, cwd=clone)
    if out.returncode != 0:
        raise RuntimeError(f"calibration failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def pick(sizes, ratios: dict) -> dict[float, int]:
    """Per nominal size, the candidate chain length whose median ratio (chain_timing) is nearest
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

    Calibration (chain_timing) times every candidate chain in one process, call by call in turn,
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


__all__ = ["ANCHOR", "DEFAULT_BENCH", "DEFAULT_INJECTED", "GPU_ANCHOR", "GPU_FILE", "KERNEL", "TARGETS", "calibrate", "clone_repo",
           "inject", "inject_gpu", "make_arms", "null_edit", "null_edit_gpu", "pick", "write_variants"]
