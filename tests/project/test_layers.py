"""Imports in src/rlperf run one way, down the layers of docs/layers.md, with no package-level circle; and
library modules carry no hidden CLI (`main()`). Parses source only (ast): imports nothing of rlperf."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "rlperf"
LAYERS_DOC = ROOT / "docs" / "layers.md"

# Known upward imports, asvtools (layer 6) -> gate (layer 7), measured on main at bbdcc49 (issue 24 section 1).
# The lead removes these once the shared pieces (InfrastructureError, write_text_atomic, UNRECORDED,
# has_results) live below both; test_the_allow_list_holds_only_imports_that_still_exist then forces the
# entries out. Do not add to this list: move the shared code down instead.
ALLOWED_UPWARD: set[tuple[str, str]] = set()  # empty: asvtools no longer imports gate (SuiteImportError in errors, stored.py)

# Entry points a parent process starts (docs/layers.md): the only library modules allowed a main().
WORKER_MAINS = {"rlperf.gate.paired_worker", "rlperf.replay.multirank.worker", "rlperf.gate.power.chain_timing"}


def layers() -> dict[str, int]:
    """Top-level part -> layer number, from the fenced block after docs/layers.md's `<!-- layers` marker."""
    text = LAYERS_DOC.read_text()
    block = text.split("<!-- layers", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    out = {}
    for line in block.splitlines():
        number, *parts = line.split()
        out.update(dict.fromkeys(parts, int(number)))
    return out


def module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_main_guard(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def imports(path: Path, src: Path = SRC) -> list[tuple[int, str]]:
    """(line, imported module) of every rlperf import in `path`, lazy ones included, except inside an
    `if __name__ == "__main__":` block (an entry point, not a dependency of the library)."""
    mod = module_name(path, src)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if _is_main_guard(child):
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, a.name) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:  # relative: resolve against this module's package
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module
                # `from pkg import submodule` imports the submodule (pkg's __init__ runs anyway)
                found.extend(dict.fromkeys((child.lineno, _submodule(source, a.name, src)) for a in child.names))
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return [(line, name) for line, name in found if name == "rlperf" or name.startswith("rlperf.")]


def _submodule(package: str, name: str, src: Path) -> str:
    """`package.name` when that is a module or package under `src`'s parent, else `package` (a name in it)."""
    candidate = src.parent.joinpath(*package.split("."), name)
    return f"{package}.{name}" if candidate.with_suffix(".py").is_file() or candidate.is_dir() else package


def part(module: str) -> str:
    """The top-level part a module belongs to: rlperf.replay.storage -> replay; rlperf -> rlperf."""
    return module.split(".")[1] if "." in module else module


def all_imports() -> list[tuple[str, int, str]]:
    return [(module_name(p), line, target) for p in sorted(SRC.rglob("*.py")) for line, target in imports(p)]


def test_every_part_of_the_package_has_a_layer():
    known = layers()
    parts = {part(module_name(p)) for p in SRC.rglob("*.py")} | {p.name for p in SRC.iterdir() if p.is_dir()
                                                                  and not p.name.startswith("__")}
    missing = sorted(parts - set(known))
    assert not missing, f"give these parts of src/rlperf a layer in docs/layers.md: {missing}"


def test_no_import_runs_back_up_the_layers():
    known = layers()
    upward = []
    for source, line, target in all_imports():
        a, b = part(source), part(target)
        if known[b] > known[a] and (source, target) not in ALLOWED_UPWARD:
            upward.append(f"{source}:{line} imports {target} ({a}, layer {known[a]} -> {b}, layer {known[b]})")
    assert not upward, "imports running back up the layers (docs/layers.md):\n" + "\n".join(upward)


def test_the_allow_list_holds_only_imports_that_still_exist():
    present = {(source, target) for source, _, target in all_imports()}
    stale = sorted(ALLOWED_UPWARD - present)
    assert not stale, f"fixed: remove these from ALLOWED_UPWARD in tests/project/test_layers.py: {stale}"


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def package_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for source, _, target in all_imports():
        if part(source) != part(target) and (source, target) not in ALLOWED_UPWARD:
            edges.setdefault(part(source), set()).add(part(target))
    return edges


def test_no_circle_between_the_parts_of_the_package():
    found = cycles(package_edges())
    assert not found, f"top-level parts that import each other (directly or round a circle): {found}"


def module_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for source, _, target in all_imports():
        if source != target:
            edges.setdefault(source, set()).add(target)
    return edges


def test_no_circle_between_modules():
    """Issue 24's target, at module level too: no two modules import each other, however indirectly (lazy
    imports count; `from pkg import submodule` is an import of the submodule)."""
    found = cycles(module_edges())
    assert not found, f"modules that import each other (directly or round a circle): {found}"


def test_library_modules_carry_no_hidden_cli():
    """A user-facing entry point is an `rlperf` command; only the worker entry points keep a main()."""
    hidden = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        if part(mod) in ("commands", "cli", "__main__") or mod in WORKER_MAINS:
            continue
        tree = ast.parse(path.read_text())
        if any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
            hidden.append(mod)
        if re.search(r"^\s*import argparse|^from argparse ", path.read_text(), re.M):
            hidden.append(f"{mod} (argparse)")
    assert not hidden, f"library modules with their own CLI; make them `rlperf` commands: {hidden}"


# ---- the checks themselves can fail -----------------------------------------------------------------
def test_the_checks_catch_an_upward_import_and_a_circle(tmp_path):
    fake = tmp_path / "rlperf" / "replay" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from . import storage\ndef f():\n    from rlperf.e2e.loop import session\n"
                    "if __name__ == '__main__':\n    from rlperf.cli import main\n")
    (fake.parent / "storage.py").write_text("")
    # the relative and the lazy import count, the entry point's does not; a submodule is named as such
    assert imports(fake, tmp_path / "rlperf") == [(1, "rlperf.replay.storage"), (3, "rlperf.e2e.loop")]
    assert layers()["e2e"] > layers()["replay"] > layers()["workload"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert "rlperf.commands.helpfmt" in module_edges()["rlperf.cli"]  # the module graph is really read
