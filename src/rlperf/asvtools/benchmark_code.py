"""The code asv_runner hashes into a benchmark's default `version`, read from a module's source text.

asv_runner 0.3 (benchmarks/_base.py, `Benchmark.__init__` and `get_source_code`) joins the benchmark
method, each `setup` it finds (the module's, then the class's) and `setup_cache`: every block as
`inspect.getsourcelines` gives it (decorators included), lines right-stripped and dedented, a method
under a `class Name:` header naming the class that defines it. The stored `version` is sha256 of that
text unless the class (or module) sets `version`. Reading the text from source (`git show
SHA:benchmarks/x.py`) instead of importing it matches a stored result to the exact code that produced
it, without the package of that commit. tests/asvtools/test_version_migration.py checks this against asv_runner.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from dataclasses import dataclass

from asv_runner.benchmarks._base import code_fingerprint


@dataclass(frozen=True)
class BenchmarkCode:
    name: str  # module.Class.method (as asv names it, relative to the benchmark folder)
    code: str  # the text asv_runner hashes
    explicit_version: str | None  # the literal `version` the class or module sets, None when unset
    param_names: tuple[str, ...] | None  # None: not a literal in the source (cannot be read without importing)

    @property
    def code_hash(self) -> str:
        """asv_runner's default version: sha256 of the code text."""
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()

    @property
    def token_hash(self) -> str:
        """asv_runner's comment- and whitespace-blind fingerprint of the same code."""
        return code_fingerprint(self.code)

    @property
    def version(self) -> str:
        return self.explicit_version if self.explicit_version is not None else self.code_hash


class NotFound(LookupError):
    """The module's source has no such class or method (or it is not plain enough to read)."""


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _block(lines: list[str], node) -> str:
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    return textwrap.dedent("\n".join(line.rstrip() for line in lines[start:node.end_lineno]))


def _assigned(body, name: str):
    for node in body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node.value
    return None


class _Module:
    def __init__(self, source: str):
        self.tree = ast.parse(source)
        self.lines = source.splitlines()
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.functions = {n.name: n for n in self.tree.body if isinstance(n, _FUNCS)}

    def mro(self, name: str) -> list[ast.ClassDef]:
        """The class and its bases defined in this module (single inheritance: what the suite uses)."""
        if name not in self.classes:
            raise NotFound(f"no class {name}")
        out = [self.classes[name]]
        local = [b.id for b in out[0].bases if isinstance(b, ast.Name) and b.id in self.classes]
        if len(local) > 1:
            raise NotFound(f"class {name} has several bases in its module; its method order is not read here")
        return out + (self.mro(local[0]) if local else [])

    def method(self, mro, name: str, ignore_case: bool = False):
        for cls in mro:
            for node in cls.body:
                if isinstance(node, _FUNCS) and (node.name.lower() == name.lower() if ignore_case else node.name == name):
                    return cls.name, node
        return None

    def literal(self, mro, name: str):
        """(found, value) of a class attribute (own class first, then bases, then the module)."""
        for body in [c.body for c in mro] + [self.tree.body]:
            value = _assigned(body, name)
            if value is not None:
                try:
                    return True, ast.literal_eval(value)
                except ValueError:
                    return True, _NOT_LITERAL
        return False, None


_NOT_LITERAL = object()


def benchmark_code(source: str, name: str) -> BenchmarkCode:
    """The asv code, version and parameter names of benchmark `name` (module.Class.method) in `source`."""
    parts = name.split(".")
    if len(parts) != 3:
        raise NotFound(f"{name}: only module.Class.method benchmarks are read")
    _, cls_name, method_name = parts
    module = _Module(source)
    mro = module.mro(cls_name)
    func = module.method(mro, method_name)
    if func is None:
        raise NotFound(f"no method {method_name} on {cls_name}")
    items = [func]
    items += [(None, node) for key, node in module.functions.items() if key.lower() == "setup"]
    setup = module.method(mro, "setup", ignore_case=True)
    items += [setup] if setup else []
    cache = module.method(mro, "setup_cache") or (
        (None, module.functions["setup_cache"]) if "setup_cache" in module.functions else None)
    items += [cache] if cache else []
    sources, previous = [], None
    for cls, node in items:
        text = _block(module.lines, node)
        if cls and cls != previous:
            text = "class {}:\n    {}".format(cls, text.replace("\n", "\n    "))
        elif cls:
            text = "    " + text.replace("\n", "\n    ")
        sources.append(text)
        previous = cls
    found, version = module.literal(mro, "version")
    if found and not isinstance(version, (str, int, float)):
        raise NotFound(f"{name}: its `version` is not a literal")
    found_names, names = module.literal(mro, "param_names")
    param_names = (tuple(names) if isinstance(names, (list, tuple)) else None) if found_names else ()
    return BenchmarkCode(name, "\n\n".join(sources).rstrip(), str(version) if found else None, param_names)


__all__ = ["BenchmarkCode", "NotFound", "benchmark_code"]
