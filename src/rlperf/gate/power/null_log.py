"""The null-run log: a folder of records, one JSON file per whole null gate run, appended, never rewritten.

One file per record keeps the log append-only by construction: a record is created whole under a new name
(atomic.create_json: temp file, fsync, hard link that refuses an existing name) or not at all, so a run
that dies, two runs that finish at once, or two nights' commits merged in git never lose or mix a record.
"""

from __future__ import annotations

import glob
import os
import time

from rlperf.atomic import TEMP_SUFFIX, create_json
from rlperf.errors import UsageError
from rlperf.gate.outputs import check_output_path
from rlperf.report.jsonio import read_json

SCHEMA = "rlperf.gate-nulls"
VERSION = 1


def record_name(started: float, base: str, head: str, attempt: int = 0) -> str:
    """`<UTC start>-<base8>-<head8>[-N].json`: sorts by time; N only when two runs share a second."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started))
    return f"{stamp}-{base[:8]}-{head[:8]}" + (f"-{attempt}" if attempt else "") + ".json"


def append(folder: str, record: dict) -> str:
    """Add `record` to the log in `folder` as a new file (never replacing one); returns its path."""
    doc = {"schema": SCHEMA, "schema_version": VERSION, **record}
    for attempt in range(1000):
        path = os.path.join(folder, record_name(record["started"], record["base"], record["head"], attempt))
        try:
            create_json(path, doc)
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"{folder}: 1000 records share the name of this run; not written")


def check_folder(folder: str) -> None:
    """Before an hour of measuring: the log is a folder or absent (then created), and writable."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"--log {folder!r} is a file; give a folder (absent, empty, or holding null-run records)")
    check_output_path(os.path.join(folder, "new-record.json"), "--log")  # creatable there (a probe file)


def read(folder: str) -> list[dict]:
    """Every record in `folder`, oldest first; a file that is not a record is a UsageError naming it."""
    if not os.path.isdir(folder):
        raise UsageError(f"{folder!r} is not a folder of null-run records (rlperf gate-power nulls run --log DIR)")
    paths = sorted(p for p in glob.glob(os.path.join(folder, "*.json")) if not p.endswith(TEMP_SUFFIX))
    records = []
    for path in paths:
        doc = read_json(path, schema=SCHEMA, versions=(VERSION,))
        doc["file"] = os.path.basename(path)
        records.append(doc)
    return sorted(records, key=lambda r: (r.get("started", 0), len(r["file"]), r["file"]))  # name-N after name


__all__ = ["SCHEMA", "VERSION", "append", "check_folder", "read", "record_name"]
