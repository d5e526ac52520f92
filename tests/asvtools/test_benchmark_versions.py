"""Every asv benchmark class carries an explicit `version`, and placement lists only grow at the end.

Without `version`, asv_runner stores sha256 of the benchmark's code as its version, and `asv publish`
(and the gate) drop every stored value whose version is not the current one: a refactor would hide a
benchmark's whole history. The check reads the sources (no import: the suite pulls in numba and torch).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from benchmarks._suite import PLACEMENT_ORDER, append_only

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BENCH_METHOD = re.compile(r"^(time|track|mem|peakmem|timeraw)_")  # asv_runner's name_regex prefixes


def _benchmark_classes():
    """(module, ClassDef) of every class asv collects: public, with a benchmark method of its own or a base's."""
    for path in sorted(BENCHMARKS.glob("*.py")):
        tree = ast.parse(path.read_text())
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

        def methods(cls):
            own = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
            for base in cls.bases:
                if isinstance(base, ast.Name) and base.id in classes:
                    own |= methods(classes[base.id])
            return own

        for name, cls in classes.items():
            if not name.startswith("_") and any(BENCH_METHOD.match(m) for m in methods(cls)):
                yield path.stem, cls


def _own_version(cls):
    for node in cls.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "version" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def test_every_benchmark_class_sets_its_own_string_version():
    classes = list(_benchmark_classes())
    assert len(classes) >= 16  # the suite as of the explicit versions: a parse that finds nothing must fail
    missing = [f"{module}.{cls.name}" for module, cls in classes if not isinstance(_own_version(cls), str)]
    assert not missing, f"set `version = \"1\"` (a string) on {missing}"


def test_no_benchmark_module_sets_a_module_level_version():
    """asv_runner reads `version` from the module too: one there would version every class at once."""
    for path in BENCHMARKS.glob("*.py"):
        tree = ast.parse(path.read_text())
        assert not any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "version" for t in n.targets)
                       for n in tree.body), path.name


def test_a_placement_added_mid_registry_is_appended_and_known_ones_keep_their_order():
    registry = ["host", "new-one", "host-pageable", "gpu", "newer"]
    assert append_only(registry) == ["host", "host-pageable", "gpu", "new-one", "newer"]
    assert append_only(reversed(PLACEMENT_ORDER)) == list(PLACEMENT_ORDER)


def test_the_committed_benchmarks_json_describes_the_suite_as_it_is_now():
    """The site, the gate's directions and the version migration read results/asv/benchmarks.json: after
    an edit of benchmarks/ it must be re-discovered (asv run --python=same --bench just-discover)."""
    from rlperf.asvtools import version_migration as vm

    root = Path(__file__).resolve().parents[2]
    assert vm.plan(str(root / "results" / "asv"), str(root), [], []) == []  # raises when it is stale


def test_the_committed_benchmarks_json_lists_each_benchmarks_params_as_they_are_now():
    """Code hashes miss a parameter list computed from a registry: two placements appended to the registry
    (uva-fused, uva-fused-bf16) were absent from benchmarks.json's params until it was re-discovered, so the
    site and the gate did not know those points. asv stores each value as its repr."""
    import importlib
    import json

    doc = json.loads((BENCHMARKS.parent / "results" / "asv" / "benchmarks.json").read_text())
    stale = []
    for name, entry in doc.items():
        if name == "version":
            continue
        module, cls, _ = name.split(".")
        params = getattr(importlib.import_module(f"benchmarks.{module}"), cls).params
        params = params if params and isinstance(params[0], list) else [params] if params else []
        if [[repr(v) for v in values] for values in params] != entry["params"]:
            stale.append(name)
    assert len(doc) > 20 and not stale, f"re-discover: asv run --python=same --bench just-discover ({stale})"
