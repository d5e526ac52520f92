"""A folder of kept interleaved passes: `--run --keep-passes DIR` writes it, `--no-run --passes-from DIR` reads it.

    DIR/passes.json          {"schema": "rlperf.gate.passes/1", "base", "head", "machine", "bench",
                              "order": ["base,head", "head,base", ...], "fingerprint": {...} | null,
                              "import_failure": null | {"sha", "message"}}
    DIR/pass-<k>/            pass k's scratch results folder, as asv wrote it: <machine>/<sha8>-*.json,
                             <machine>/machine.json, benchmarks.json
    DIR/paired.json          with --paired only: every point's raw (base, head) sample pairs (gate.paired)

The folder is built beside DIR and renamed into place once complete, so DIR is either absent (or the
empty folder it was) or whole. A head whose suite does not import still gets a passes.json (no passes,
`import_failure` naming the commit), so a judge elsewhere reaches the same verdict (exit 3) as `--run`.
Reading checks everything against the comparison asked for; anything missing, foreign or malformed is
an InfrastructureError (exit 5): kept passes that cannot be judged are never a verdict on the code.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace

from rlperf.gate.exitcodes import InfrastructureError
from rlperf.gate.results import CommitResults, load_commit
from rlperf.report.jsonio import write_json

SCHEMA = "rlperf.gate.passes/1"
MANIFEST = "passes.json"
PAIRED = "paired.json"


@dataclass(frozen=True)
class Passes:
    """What k interleaved passes measured: per pass (base, head), in the order each pass ran them."""

    runs: tuple[tuple[CommitResults, CommitResults], ...]
    order: tuple[str, ...]  # "base,head" / "head,base" per pass, for the report
    fingerprint: dict | None = None  # the measuring session's host fingerprint (kept passes only)
    import_failure: tuple[str, str] | None = None  # (sha, message): a suite that did not import (kept passes)
    paired: dict | None = None  # point name -> gate.paired.PointPairs, when --run sampled pairs
    paired_block: int = 0  # pairs per judged block: the sampling spec's block, whenever `paired` is set
    store_notes: tuple[str, ...] = ()  # what merging the last pass into the results folder left out (--run)


def pass_folder(index: int) -> str:
    return f"pass-{index}"


def save(keep: str, pass_dirs: list[str], *, base: str, head: str, machine: str, bench: str | None,
         order: list[str], fingerprint: dict | None, import_failure: tuple[str, str] | None = None,
         paired: str | None = None) -> None:
    """Copy each pass folder to keep/pass-<k>/ (and `paired`, a gate.paired file, to keep/paired.json)
    and write keep/passes.json, all or nothing."""
    full = os.path.abspath(keep)
    parent = os.path.dirname(full)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(full)}.", dir=parent)
    try:
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would outlive the rename
        for index, folder in enumerate(pass_dirs):
            shutil.copytree(folder, os.path.join(tmp, pass_folder(index)))
        if paired:
            shutil.copy2(paired, os.path.join(tmp, PAIRED))
        doc = {"schema": SCHEMA, "base": base, "head": head, "machine": machine, "bench": bench,
               "order": list(order), "fingerprint": fingerprint,
               "import_failure": None if import_failure is None else
               {"sha": import_failure[0], "message": import_failure[1]}}
        write_json(os.path.join(tmp, MANIFEST), doc)
        os.replace(tmp, full)  # onto an absent or empty folder (checked before measuring)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _manifest(folder: str) -> dict:
    path = os.path.join(folder, MANIFEST)
    if not os.path.isdir(folder) or not os.path.isfile(path):
        raise InfrastructureError(f"no kept interleaved passes in {folder} (no {MANIFEST}): the measuring "
                                  "run stored none; see its log (--run --keep-passes)")
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"unreadable {path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InfrastructureError(f"malformed {path}: expected schema {SCHEMA!r}, got {got!r}")
    return doc


def _text(doc: dict, key: str, path: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise InfrastructureError(f"malformed {path}: {key!r} must be a non-empty string, got {value!r}")
    return value


def load(folder: str, base: str, head: str, machine: str) -> Passes:
    """The passes kept in `folder`, checked against the commits and machine this gate compares."""
    doc = _manifest(folder)
    path = os.path.join(folder, MANIFEST)
    kept = {key: _text(doc, key, path) for key in ("base", "head", "machine")}
    asked = {"base": base, "head": head, "machine": machine}
    short = {"base": lambda s: s[:12], "head": lambda s: s[:12], "machine": repr}
    wrong = [f"{k} {short[k](kept[k])} (this gate: {short[k](asked[k])})" for k in asked if kept[k] != asked[k]]
    if wrong:
        raise InfrastructureError(f"the passes in {folder} are not of this comparison: they hold "
                                  + "; ".join(wrong))
    order, fp, failure = doc.get("order"), doc.get("fingerprint"), doc.get("import_failure")
    if not isinstance(order, list) or not all(isinstance(o, str) for o in order):
        raise InfrastructureError(f"malformed {path}: 'order' must be a list of strings, got {order!r}")
    if fp is not None and not isinstance(fp, dict):
        raise InfrastructureError(f"malformed {path}: 'fingerprint' must be an object or null")
    if failure is not None:
        if not (isinstance(failure, dict) and failure.get("sha") in (base, head)
                and isinstance(failure.get("message"), str)):
            raise InfrastructureError(f"malformed {path}: 'import_failure' must name the base or head commit")
        return Passes(runs=(), order=tuple(order), fingerprint=fp, import_failure=(failure["sha"], failure["message"]))
    if not order:
        raise InfrastructureError(f"{path} lists no passes")
    on_disk = sorted(f for f in os.listdir(folder) if f.startswith("pass-"))
    if on_disk != sorted(pass_folder(i) for i in range(len(order))):
        raise InfrastructureError(f"{folder} holds pass folders {on_disk}, but {MANIFEST} lists {len(order)} pass(es)")
    runs = []
    for index in range(len(order)):
        pass_dir = os.path.join(folder, pass_folder(index))
        pair = (load_commit(pass_dir, machine, base), load_commit(pass_dir, machine, head))
        for side, sha, res in (("base", base, pair[0]), ("head", head, pair[1])):
            if not res.points:
                raise InfrastructureError(f"{pass_dir} holds no results of the {side} {sha[:12]} on machine {machine!r}")
        runs.append(pair)
    paired, block = _paired(folder)
    return Passes(runs=tuple(runs), order=tuple(order), fingerprint=fp, paired=paired, paired_block=block)


def _paired(folder: str):
    """(name -> PointPairs, block) from folder/paired.json, or (None, default) when the run paired nothing."""
    from rlperf.gate import paired as pairing

    path = os.path.join(folder, PAIRED)
    if not os.path.exists(path):
        return None, 0
    try:
        spec, points, _ = pairing.load(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfrastructureError(f"unreadable {path}: {type(exc).__name__}: {exc}") from exc
    return {p.name: p for p in points}, spec.block


def under_record(base: CommitResults, head: CommitResults, record: CommitResults) -> tuple[CommitResults, list[str]]:
    """The passes' base side under the trusted base record: the record's asv versions win, and a point the
    record measured that the passes lack on both sides joins base, so it reads as missing on head.

    Returns (base, notes). The passes were measured in the head's job; the record in the base's own."""
    versions = {p.key: p.version for p in record.points.values()}
    differing = sorted({p.key for p in base.points.values() if versions.get(p.key, p.version) != p.version})
    points = {k: replace(p, version=versions.get(p.key, p.version)) for k, p in base.points.items()}
    kept_names = {name for _, name in base.points} | {name for _, name in head.points}
    env = sorted(base.envs)[0] if base.envs else next(iter(record.envs), "")
    absent = sorted({name for (_, name), p in record.points.items() if p.measured and name not in kept_names})
    for (_, name), p in sorted(record.points.items()):
        if name in absent and (env, name) not in points:
            points[(env, name)] = replace(p, env=env)
    notes = []
    if differing:
        notes.append(f"{len(differing)} benchmark(s) had another asv version in the passes' base than in the base "
                     f"record ({', '.join(differing[:5])}): the record's version was compared")
    if absent:
        notes.append(f"{len(absent)} point(s) measured in the base record are in no kept pass: missing on head")
    return CommitResults(points=points, envs=dict(base.envs)), notes


__all__ = ["MANIFEST", "PAIRED", "SCHEMA", "Passes", "load", "pass_folder", "save", "under_record"]
