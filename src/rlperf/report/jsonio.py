"""Versioned result documents: written atomically, read back with a clear error when foreign or malformed."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from rlperf.errors import UsageError


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` via a temp file + rename in the same folder, so a crash never leaves half a file
    (a killed writer leaves at most a hidden `.<name>.*` temp file beside the old one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: str | Path, doc: dict) -> Path:
    """Write `doc` to `path` atomically (write_text_atomic)."""
    return write_text_atomic(path, json.dumps(doc, indent=2, sort_keys=False, default=_jsonable) + "\n")


def _jsonable(obj):
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


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
