"""Measure a point once per asv run, on its first use, and share it between the processes of its tracks.

asv runs every track of every point in a process of its own. A benchmark whose one measurement feeds
several tracks (E2EIteration: iteration time, exposed replay wait and env steps/s of the same iterations)
cannot measure in `setup`, which runs once per track, and measuring every point in `setup_cache` measures
what `--bench` did not select too. So `setup_cache` hands out a fresh folder (`fresh_folder`: inside
asv's cache directory, which asv removes after the run) and the first track of a point measures it under
that point's file lock (`measured_once`); the point's other tracks wait for the lock and read the stored
result. A point no selected track asks for is never measured.

Only the standard library: the history runs this suite over old commits' `src` (benchmarks/_suite.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile

ERROR = "error"  # key of a stored result whose measurement raised: the point's other tracks fail fast


def fresh_folder(prefix: str) -> str:
    """A new empty folder under the working directory (asv's setup_cache directory during a run)."""
    return tempfile.mkdtemp(prefix=prefix + "-", dir=os.getcwd())


def point_path(folder: str, key: tuple) -> str:
    """The file that holds the point `key`'s result: its values joined, safe for any file system."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", "--".join(str(part) for part in key))
    return os.path.join(folder, name + ".json")


def measured_once(folder: str, key: tuple, measure) -> dict:
    """The point's result: read when an earlier track stored it, else `measure()` (a JSON-able dict),
    stored before the lock is released. A measurement that raises is stored as its error, so the point's
    other tracks raise at once instead of measuring it again."""
    path = point_path(folder, key)
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if os.path.exists(path):
            with open(path) as fh:
                result = json.load(fh)
        else:
            try:
                result = measure()
            except Exception as exc:
                _write(path, {ERROR: f"{type(exc).__name__}: {exc}"})
                raise
            _write(path, result)
    if ERROR in result:
        raise RuntimeError(f"measuring {key} failed in an earlier track of this run: {result[ERROR]}")
    return result


def _write(path: str, result: dict) -> None:
    """Write then rename, so a reader never sees half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(result, fh)
    os.replace(tmp, path)


__all__ = ["ERROR", "fresh_folder", "measured_once", "point_path"]
