"""Versioned result documents: written atomically, read back with a clear error when foreign or malformed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

from rlperf.errors import UsageError
from rlperf import atomic


def write_json(path: str | Path, doc: dict) -> Path:
    """Write `doc` to `path` whole or not at all (rlperf.atomic holds every writer)."""
    return atomic.write_json(path, doc)


def derive_json(out: Path, build: Callable[[], dict], *, prog: str) -> dict | None:
    """Write the document `build()` makes to `out`, a new file, and return it; on a UsageError (an `out` that
    exists included, checked before `build` runs) print it as `prog: ...`, write nothing, return None (exit 2)."""
    try:
        if out.exists():
            raise UsageError(f"{out}: exists; not overwritten")
        doc = build()
    except UsageError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None
    write_json(out, doc)
    return doc


def read_json(path: str | Path, *, schema: str, versions: tuple[int, ...]) -> dict:
    """Load a document of `schema` at one of `versions`; anything else is a UsageError naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise UsageError(f"{path}: not an rlperf {schema!r} result (schema is {found!r})")
    if doc.get("schema_version") not in versions:
        raise UsageError(f"{path}: schema_version {doc.get('schema_version')!r} is not supported; "
                         f"valid: {', '.join(map(str, versions))}")
    return doc
