"""How a run's asv results enter a shared results folder: merged point by point, under a lock, whole.

asv keeps one file per (machine, commit, environment). A run that measured a subset (`--bench`, a
bisection step) or a second gate on the same folder must not replace that file with what it measured,
so every writer of the gate measures into a scratch folder and `publish` merges from there:

- a point measured now replaces the stored one of the same benchmark and parameter tuple; stored points
  not measured now stay (which cells a run measured follows asv's own `--bench` rule, `selected`);
- a benchmark whose asv `version` differs between the stored file and the run is taken whole from the
  run, as asv itself does when it appends to a file: two versions never share one entry, and the stored
  points so dropped are named in the messages;
- a stored file measured in another environment (its params: host facts, Python and packages, or its
  env_vars differ) is kept as it is, and the run's points for it are not stored (named), unless the run
  re-measured every point the file holds: one file describes one environment, and a gate never rewrites
  a history measured on another host;
- benchmarks.json: the union, the run's entry winning per benchmark (asv would keep only the last
  run's suite); machine.json and the commit's fingerprint sidecar: the run's, when any of its results
  were stored.

Everything is read and merged before anything is written, each file is replaced atomically (temp file +
os.replace), and the whole read-merge-write holds an exclusive flock on `<results>/.rlperf-store.lock`.
A second writer waits up to `wait_s` seconds, then gets an InfrastructureError naming the holder.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import itertools
import json
import math
import os
import re
import socket
import sys
import time

from rlperf.asvtools.stored import read_json_object
from rlperf.errors import InfrastructureError
from rlperf.atomic import write_text

LOCK_NAME = ".rlperf-store.lock"
DEFAULT_WAIT_S = 300.0  # a publish holds the lock for seconds; minutes of waiting mean a stuck holder
POLL_S = 0.1
API_VERSION = 2  # asv.results.Results.api_version of asv 0.6


# --- the lock ------------------------------------------------------------------------------------------

def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 1000, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return text or "holder not recorded"


@contextlib.contextmanager
def locked(results_dir: str, wait_s: float = DEFAULT_WAIT_S, echo=None):
    """Hold the results folder's store lock (exclusive flock on LOCK_NAME inside it) for the block.

    The lock file records its holder (pid, host, start, command) while held, for the message a waiter
    gets; it is never deleted (removing a lock file races with a writer that has just opened it)."""
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, LOCK_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InfrastructureError(f"cannot open the store lock {path}: {exc.strerror}") from exc
    try:
        deadline, told = time.monotonic() + wait_s, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise InfrastructureError(
                        f"the results folder {results_dir} stayed locked by another writer for {wait_s:g} s "
                        f"({_holder(fd)}; lock file {path}); nothing was stored. Re-run when it is done, or "
                        "raise --store-wait") from None
                if not told and echo:
                    echo(f"rlperf: waiting up to {wait_s:g} s for the store lock {path} ({_holder(fd)})")
                    told = True
                time.sleep(min(POLL_S, left))
            except OSError as exc:
                raise InfrastructureError(f"cannot lock {path}: {exc.strerror}") from exc
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        command = " ".join(sys.argv)[:300]
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}: {command}\n".encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- one result file ------------------------------------------------------------------------------------

def _per_point(column: str) -> bool:
    """Columns holding one value per parameter combination; the others describe the whole benchmark."""
    return column in ("result", "samples") or column.startswith("stats_")


def point_name(name: str, combo: tuple) -> str:
    """asv's name of one point: `bench(p1, p2)` for a parameterised benchmark, the name otherwise."""
    return f"{name}({', '.join(combo)})" if combo else name


def selected(name: str, combo: tuple, bench: str | None) -> bool:
    """Whether a run with asv `--bench bench` measured this point (asv.benchmarks.Benchmarks: a
    parameterised benchmark runs the combinations whose `name(p1, p2)` the regex finds, and stores NaN,
    as for a skipped point, for the rest; an unparameterised one is in the file only when it ran)."""
    return bench is None or not combo or re.search(bench, point_name(name, combo)) is not None


def _holds_point(cell: dict) -> bool:
    """A stored cell is a point unless it is NaN (skipped or not run): a value, or None (a failure)."""
    value = cell.get("result")
    return not (isinstance(value, float) and math.isnan(value))


class _Entry:
    """One benchmark of one result file: per-entry columns plus its cells keyed by parameter tuple."""

    def __init__(self, name: str, row: list, columns: list[str], path: str):
        values = dict(zip(columns, row))
        self.name = name
        self.dims = [list(d) for d in (values.get("params") or [])]
        self.combos = list(itertools.product(*self.dims))
        self.whole = {c: v for c, v in values.items() if not _per_point(c)}
        self.cells: dict[tuple, dict] = {combo: {} for combo in self.combos}
        for column in columns:
            if not _per_point(column):
                continue
            got = values.get(column)
            if got is None:
                got = [None] * len(self.combos)
            if not isinstance(got, list) or len(got) != len(self.combos):
                raise InfrastructureError(f"malformed asv result {path}: benchmark {name!r} has {column!r} of "
                                          f"length {len(got) if isinstance(got, list) else type(got).__name__}, "
                                          f"its parameters give {len(self.combos)}")
            for combo, value in zip(self.combos, got):
                self.cells[combo][column] = value

    @property
    def version(self):
        return self.whole.get("version")

    def points(self) -> list[tuple]:
        return [combo for combo in self.combos if _holds_point(self.cells[combo])]

    def row(self, columns: list[str], dims=None, cells=None) -> list:
        """asv's stored row (asv.results.Results.save): all-None lists become None, trailing Nones go."""
        dims = self.dims if dims is None else dims
        cells = self.cells if cells is None else cells
        combos = list(itertools.product(*dims))
        out = []
        for column in columns:
            if column == "params":
                value = dims
            elif _per_point(column):
                value = [cells.get(combo, {}).get(column, math.nan if column == "result" else None)
                         for combo in combos]
                value = None if all(v is None for v in value) else value
            else:
                value = self.whole.get(column)
            out.append(value)
        while out and out[-1] is None:
            out.pop()
        return out


def read_result(path: str) -> dict:
    """One asv result file (api version 2) as JSON, or an InfrastructureError naming what is wrong."""
    doc = read_json_object(path, "asv result")
    if not isinstance(doc.get("results"), dict) or not isinstance(doc.get("result_columns"), list):
        raise InfrastructureError(f"malformed asv result {path}: no results/result_columns")
    if doc.get("version") != API_VERSION:
        raise InfrastructureError(f"asv result {path} has format version {doc.get('version')!r}; the store "
                                  f"merges version {API_VERSION} (asv 0.6) only")
    return doc


def _entries(doc: dict, path: str) -> dict[str, _Entry]:
    columns = doc["result_columns"]
    return {name: _Entry(name, row if isinstance(row, list) else [], columns, path)
            for name, row in doc["results"].items()}


def _environment(doc: dict) -> dict:
    return {"params": doc.get("params"), "python": doc.get("python"), "env_vars": doc.get("env_vars") or {}}


def _environment_differences(stored: dict, new: dict) -> list[str]:
    a, b = _environment(stored), _environment(new)
    a = {**{f"params.{k}": v for k, v in (a.pop("params") or {}).items()}, **a}
    b = {**{f"params.{k}": v for k, v in (b.pop("params") or {}).items()}, **b}
    return [f"{k}: stored {a.get(k)!r}, this run {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _listed(names: list[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _merge_entry(stored: _Entry, new: _Entry, bench: str | None) -> tuple[list, dict, list[str]]:
    """(dims, cells, dropped point names) of one benchmark both files hold: cell by cell when the
    version and the number of parameters agree, else the run's entry whole."""
    measured = {combo for combo in new.combos if selected(new.name, combo, bench)}
    if stored.version != new.version or len(stored.dims) != len(new.dims):
        dropped = [point_name(stored.name, c) for c in stored.points()
                   if not (c in new.cells and c in measured)]
        return new.dims, new.cells, dropped
    dims = [list(s) + [v for v in n if v not in s] for s, n in zip(stored.dims, new.dims)]
    cells = {}
    for combo in itertools.product(*dims):
        if combo in measured:
            cells[combo] = new.cells[combo]
        elif combo in stored.cells:
            cells[combo] = stored.cells[combo]
        elif combo in new.cells:
            cells[combo] = new.cells[combo]
    return dims, cells, []


def merge_result(stored: dict | None, new: dict, bench: str | None = None,
                 path: str = "the stored file") -> tuple[dict | None, list[str]]:
    """The file to store for one commit and environment: (document, notes), or (None, notes) when the
    stored file stays as it is (another environment, see the module docstring).

    bench: the asv `--bench` regex the run measured with (None: everything it ran)."""
    if stored is None:
        return new, []
    if stored.get("commit_hash") != new.get("commit_hash"):
        raise InfrastructureError(f"{path} holds commit {stored.get('commit_hash')!r}, the run "
                                  f"{new.get('commit_hash')!r} (an 8-character prefix collision); refusing to merge")
    old_entries, new_entries = _entries(stored, path), _entries(new, "the run's result")
    columns = list(new["result_columns"]) + [c for c in stored["result_columns"] if c not in new["result_columns"]]
    results, notes, kept = {}, [], []
    for name in list(old_entries) + [n for n in new_entries if n not in old_entries]:
        old, fresh = old_entries.get(name), new_entries.get(name)
        if fresh is None:
            results[name] = old.row(columns)
            kept += [point_name(name, c) for c in old.points()]
            continue
        if old is None:
            results[name] = fresh.row(columns)
            continue
        dims, cells, dropped = _merge_entry(old, fresh, bench)
        results[name] = fresh.row(columns, dims, cells)
        kept += [point_name(name, c) for c in old.points() if cells.get(c) is old.cells[c]]
        if dropped:
            notes.append(f"{name}: its asv version changed (stored {str(old.version)[:12]}, this run "
                         f"{str(fresh.version)[:12]}), so the entry is this run's; {len(dropped)} stored point(s) "
                         f"of the old version that it did not measure were dropped: {_listed(dropped)}")
    differences = _environment_differences(stored, new)
    if differences and kept:
        return None, [f"not stored: {path} was measured in another environment ({'; '.join(differences[:4])}) "
                      f"and holds {len(kept)} point(s) this run did not measure ({_listed(kept, 3)}); it is kept "
                      "as it was, since one file describes one environment"]
    merged = dict(new)
    merged["result_columns"] = columns
    merged["results"] = results
    merged["durations"] = {**(stored.get("durations") or {}), **(new.get("durations") or {})}
    return merged, notes


# --- benchmarks.json -----------------------------------------------------------------------------------

def _read_meta(path: str) -> dict:
    return read_json_object(path, "benchmarks")


def merge_benchmarks(stored: dict | None, *runs: dict) -> dict:
    """benchmarks.json: every stored entry, each run's entry (later runs last) winning per benchmark."""
    merged = dict(stored or {})
    for doc in runs:
        merged.update(doc)
    return merged


# --- publish -------------------------------------------------------------------------------------------

def publish(results_dir: str, machine: str, source_dir: str, shas, *, metas=None, bench: str | None = None,
            fingerprint: dict | None = None, wait_s: float = DEFAULT_WAIT_S, echo=None) -> list[str]:
    """Merge the results of `shas` that one run wrote into `source_dir` (an asv results folder) into
    `results_dir`, under the folder's lock; returns the notes (also echoed).

    metas: benchmarks.json files to merge, in order (default: source_dir's own); bench: the run's asv
    `--bench` regex; fingerprint: the session's host fingerprint, stored beside each commit that got
    results (asvtools.fingerprint)."""
    from rlperf.asvtools import fingerprint as sidecar

    echo = echo or (lambda line: None)
    metas = [os.path.join(source_dir, "benchmarks.json")] if metas is None else list(metas)
    target = os.path.join(results_dir, machine)
    notes, writes, stored_shas = [], [], []
    with locked(results_dir, wait_s, echo):
        for sha in dict.fromkeys(shas):
            for source in sorted(glob.glob(os.path.join(source_dir, machine, sha[:8] + "-*.json"))):
                path = os.path.join(target, os.path.basename(source))
                stored = read_result(path) if os.path.isfile(path) else None
                doc, said = merge_result(stored, read_result(source), bench, path)
                notes += said
                if doc is not None:
                    writes.append((path, json.dumps(doc)))  # asv's own layout: compact, one line
                    stored_shas.append(sha)
        meta_path = os.path.join(results_dir, "benchmarks.json")
        runs = [_read_meta(m) for m in metas if os.path.isfile(m)]
        if runs:
            stored_meta = _read_meta(meta_path) if os.path.isfile(meta_path) else None
            writes.append((meta_path, json.dumps(merge_benchmarks(stored_meta, *runs), indent=4, sort_keys=True)))
        machine_json = os.path.join(source_dir, machine, "machine.json")
        if stored_shas and os.path.isfile(machine_json):
            with open(machine_json) as fh:
                writes.append((os.path.join(target, "machine.json"), fh.read()))
        for sha in dict.fromkeys(stored_shas) if fingerprint is not None else ():
            sidecar.store(results_dir, machine, sha, fingerprint)
        for path, text in writes:
            write_text(path, text)
    for line in notes:
        echo(f"rlperf: {line}")
    return notes


__all__ = ["DEFAULT_WAIT_S", "LOCK_NAME", "locked", "merge_benchmarks", "merge_result", "point_name", "publish",
           "read_result", "selected"]
