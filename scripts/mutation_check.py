"""Mutation check: perturbing any one reward term by 0.5% in a fused kernel alone must fail parity.

For each task it copies the fused module's source, multiplies ONE term's contribution by 1.005 (an AST
edit anchored on that term's statement), loads the copy as a module, runs rlperf's parity check with the
copy standing in for the real module, and reports caught/missed per term. The numpy reference and the
scales are untouched (scales are shared inputs: mutate code, not scales). The profile has every term
active and the inputs are the coverage inputs (`make_parity_inputs`), so no term is 0 everywhere.

Anchors (see TASKS): walk and probe, the term value in `wK = weighted(s[T_<SLOT>], <value>)`; motion tracking, the
weighted-term assignment `w = scale[<k>] * ...`. If a kernel is restructured and an anchor matches
zero or several statements, the script stops loudly (exit 3) naming the term: update TASKS and _matches.

    python scripts/mutation_check.py                                  # every task and term (minutes)
    python scripts/mutation_check.py --tasks g1_walk_flat --terms penalty_close_feet_xy
    python scripts/mutation_check.py --jobs 4 --json out/mutation.json

Exit codes: 0 every mutation caught, 1 a mutation survived (or the unmutated kernel fails parity),
2 bad input, 3 an anchor was not found.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

FACTOR = 1.005
NUM_ENVS, SEED, THREADS = 1000, 0, 1
EXIT_SURVIVED, EXIT_USAGE, EXIT_ANCHOR = 1, 2, 3


@dataclass(frozen=True)
class TaskSpec:
    module: str  # the fused module to mutate
    profile: str  # a profile with every term active
    anchor: str  # "weighted-call" or "weighted-scale"


TASKS = {
    "g1_walk_flat": TaskSpec("rlperf.envs.walk.fused", "full_supported", "weighted-call"),
    "probe": TaskSpec("rlperf.envs.probe.fused", "default", "weighted-call"),
    "g1_motion_tracking": TaskSpec("rlperf.envs.motion_tracking.fused", "full_supported", "weighted-scale"),
}


class AnchorError(RuntimeError):
    """A term's anchor statement is missing or ambiguous in the fused source."""


def _slot_names(module_name: str) -> dict[int, str]:
    """{slot index: the module's T_* constant for it} (walk and probe number their slots T_LIN, ...)."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    names = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for elt in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(elt, ast.Name) and elt.id.startswith("T_"):
                        value = getattr(module, elt.id, None)
                        if isinstance(value, int):
                            names.setdefault(value, elt.id)
    return names


def _matches(node: ast.AST, spec: TaskSpec, slot: int, slot_name: str | None) -> bool:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target = node.targets[0]
    if spec.anchor == "weighted-call":  # wK = weighted(s[T_X], <value>)
        call = node.value
        return (isinstance(target, ast.Name) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == "weighted" and len(call.args) == 2 and isinstance(call.args[0], ast.Subscript)
                and isinstance(call.args[0].slice, ast.Name) and call.args[0].slice.id == slot_name)
    # w = scale[k] * <rest>
    value = node.value
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) and isinstance(value.left, ast.BinOp):
        value = value.left
    return (isinstance(target, ast.Name) and target.id == "w" and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Mult) and isinstance(value.left, ast.Subscript)
            and isinstance(value.left.value, ast.Name) and value.left.value.id == "scale"
            and isinstance(value.left.slice, ast.Constant) and value.left.slice.value == slot)


def mutated_source(task: str, term: str) -> str:
    """The fused module's source with `term`'s contribution multiplied by FACTOR (AnchorError if unanchored)."""
    from rlperf.envs import registry

    spec = TASKS[task]
    slot = list(registry.get(task).terms).index(term)
    slot_name = _slot_names(spec.module).get(slot) if spec.anchor != "weighted-scale" else None
    tree = ast.parse(inspect.getsource(importlib.import_module(spec.module)))
    hits = [node for node in ast.walk(tree) if _matches(node, spec, slot, slot_name)]
    if len(hits) != 1:
        where = {"weighted-call": f"wK = weighted(s[{slot_name}], ...)",
                 "weighted-scale": f"w = scale[{slot}] * ..."}[spec.anchor]
        raise AnchorError(f"{task}: anchor for term {term!r} ({where}) matched {len(hits)} statements in "
                          f"{spec.module}; update TASKS and _matches in scripts/mutation_check.py")
    node = hits[0]
    if spec.anchor == "weighted-call":  # scale the term's value, leave its scale (a shared input) alone
        node.value.args[1] = ast.BinOp(left=node.value.args[1], op=ast.Mult(), right=ast.Constant(FACTOR))
    else:
        node.value = ast.BinOp(left=node.value, op=ast.Mult(), right=ast.Constant(FACTOR))
    return ast.unparse(ast.fix_missing_locations(tree))


@dataclass(frozen=True)
class Outcome:
    task: str
    term: str
    caught: bool
    failures: list
    max_abs_log_diff: float
    max_abs_reward_diff: float
    seconds: float


def _parity(task: str):
    from rlperf.envs import parity, registry

    w = registry.get(task)
    inputs = parity.make_parity_inputs(w, NUM_ENVS, TASKS[task].profile, seed=SEED)
    return parity.check(w, TASKS[task].profile, NUM_ENVS, THREADS, inputs=inputs)


def run_one(task: str, term: str) -> Outcome:
    """Load the mutated copy in place of the real fused module, run parity, restore the real module."""
    spec = TASKS[task]
    t0 = time.perf_counter()
    source = mutated_source(task, term)
    real = importlib.import_module(spec.module)
    with tempfile.TemporaryDirectory(prefix="rlperf-mutant-") as tmp:
        name = f"_rlperf_mutant_{task}_{term}"
        path = Path(tmp) / f"{name}.py"
        path.write_text(source)
        loader_spec = importlib.util.spec_from_file_location(name, path)
        mutant = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(mutant)
        sys.modules[spec.module] = mutant
        try:
            result = _parity(task)
        finally:
            sys.modules[spec.module] = real
    return Outcome(task, term, caught=not result.ok, failures=list(result.failures),
                   max_abs_log_diff=result.max_abs_log_diff, max_abs_reward_diff=result.max_abs_reward_diff,
                   seconds=round(time.perf_counter() - t0, 1))


def _run_one_in_child(args):
    return run_one(*args)


class _Serial:
    """The in-process stand-in for a process pool (--jobs 1)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, items):
        return map(fn, items)


def plan(tasks: list[str], terms: list[str] | None) -> list[tuple[str, str]]:
    """(task, term) pairs; ValueError naming the valid choices for anything unknown."""
    from rlperf.envs import registry

    pairs = []
    for task in tasks:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
        names = list(registry.get(task).terms)
        chosen = names if not terms else [t for t in terms if t in names]
        pairs += [(task, term) for term in chosen]
    unknown = set(terms or ()) - {term for _, term in pairs}
    if unknown:
        raise ValueError(f"unknown terms {sorted(unknown)} for tasks {tasks}")
    return pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--terms", help="comma-separated term names (default: every term of each task)")
    p.add_argument("--jobs", type=int, default=1, help="mutants compiled in parallel processes")
    p.add_argument("--json", dest="json_path", help="also write the outcomes to this JSON file")
    args = p.parse_args(argv)
    try:
        tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
        terms = [t.strip() for t in args.terms.split(",") if t.strip()] if args.terms else None
        pairs = plan(tasks, terms)
        if args.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
        if args.json_path and Path(args.json_path).is_dir():
            raise ValueError(f"--json: {args.json_path} is a directory")
        for task, term in pairs:  # every anchor must resolve before anything compiles
            mutated_source(task, term)
    except ValueError as exc:
        print(f"mutation_check: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AnchorError as exc:
        print(f"mutation_check: ANCHOR NOT FOUND: {exc}", file=sys.stderr)
        return EXIT_ANCHOR
    for task in tasks:
        baseline = _parity(task)
        if not baseline.ok:
            print(f"mutation_check: the unmutated {task} kernel fails parity: {baseline.failures}", file=sys.stderr)
            return EXIT_SURVIVED
    outcomes = []
    with ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else _Serial() as pool:
        for o in pool.map(_run_one_in_child, pairs):  # printed as they finish: a full run takes minutes
            outcomes.append(o)
            verdict = "caught" if o.caught else "MISSED"
            print(f"{o.task:20s} {o.term:24s} {verdict:7s} log diff {o.max_abs_log_diff:.2e}  "
                  f"reward diff {o.max_abs_reward_diff:.2e}  {o.seconds:5.1f} s  ({'; '.join(o.failures[:3])})",
                  flush=True)
    missed = [o for o in outcomes if not o.caught]
    print(f"{len(outcomes) - len(missed)}/{len(outcomes)} mutations caught (x{FACTOR} per term, "
          f"{NUM_ENVS} envs, seed {SEED})")
    if args.json_path:
        from rlperf.report.jsonio import write_json

        write_json(args.json_path, {"schema": "rlperf.mutation", "schema_version": 1, "factor": FACTOR,
                                    "num_envs": NUM_ENVS, "seed": SEED, "command": " ".join(sys.argv),
                                    "outcomes": [asdict(o) for o in outcomes]})
    return EXIT_SURVIVED if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
