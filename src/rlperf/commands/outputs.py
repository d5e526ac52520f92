"""What the measuring commands (env, noise, replay, e2e) share around their own measurement: where the
reports go and in what order, and how `--plot-only` re-renders a saved JSON.

A run measures and writes its reports next to its JSON, or (`--plot-only PATH`) reads a saved JSON and
re-renders it into `args.plot_only_dir` (never next to its input unless asked). Either way a command's
`reports(doc, folder)` writes into a staging folder, and the reports and the JSON are published together,
JSON last (`rlperf.atomic.Staging`): an interrupted run changes nothing, and two runs never mix files.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Callable

from rlperf.commands.args import malformed_rows, plot_only_dir
from rlperf.errors import UsageError

Reports = Callable[[dict, Path], object]  # (doc, staging folder) -> whatever the command wants back


def read_saved(path: Path, schema: str, version: int, shape: dict[str, type]) -> dict:
    """A saved result for --plot-only: its schema and version (report.jsonio.read_json), and each top-level
    key the renderers read present with its type (`shape`); else UsageError (exit 2) naming file and key."""
    from rlperf.report.jsonio import read_json

    doc = read_json(path, schema=schema, versions=(version,))
    for key, kind in shape.items():
        if key not in doc:
            raise UsageError(f"{path}: malformed {schema} result, missing key {key!r}; cannot render it")
        if not isinstance(doc[key], kind):
            raise UsageError(f"{path}: malformed {schema} result, {key!r} is a {type(doc[key]).__name__}, "
                             f"not a {kind.__name__}; cannot render it")
    return doc


def publish(doc: dict, folder: Path, reports: Callable[[Path], object], out_json: Path | None = None) -> list[Path]:
    """`reports(staging)` writes the files bound for `folder`, then `doc` goes to `out_json` when given;
    all are published together, JSON last. Returns the published paths."""
    from rlperf.atomic import Staging, write_json

    with Staging() as stage:
        reports(stage.folder(folder))
        if out_json is not None:
            write_json(stage.path(out_json), doc)
        return stage.publish(last=[out_json] if out_json is not None else [])


def replot(args, command: str, *, schema: str, version: int, shape: dict[str, type],
           reports: Reports) -> tuple[dict, Path, list[Path]]:
    """--plot-only PATH: the saved document (read_saved) re-rendered into plot_only_dir; rows its renderers
    cannot read are exit 2 with nothing written. Returns the document, the folder and the published paths."""
    path = Path(args.plot_only)
    doc = read_saved(path, schema, version, shape)
    folder = plot_only_dir(args, command)
    with malformed_rows(path):
        return doc, folder, publish(doc, folder, partial(reports, doc))


def measure_or_replot(args, command: str, *, schema: str, version: int, shape: dict[str, type],
                      reports: Reports, measure: Callable[[], tuple[dict, Path]]) -> tuple[dict, Path | None, Path]:
    """One run of a command whose reports sit next to its JSON: --plot-only re-renders (replot), otherwise
    `measure()` gives the document and its JSON path and everything is published beside that JSON.
    Returns the document, the JSON written (None for --plot-only) and the reports' folder."""
    if args.plot_only:
        doc, folder, _ = replot(args, command, schema=schema, version=version, shape=shape, reports=reports)
        return doc, None, folder
    doc, out_json = measure()
    publish(doc, out_json.parent, partial(reports, doc), out_json)
    return doc, out_json, out_json.parent


def finish(doc: dict, out_json: Path, plot_dir: Path, reports: Callable[[dict, Path], list[Path]], *,
           rows: str, noun: str) -> int:
    """A measured run of replay or e2e: its reports (`reports(doc, folder)` returns the files it wrote, which
    the JSON lists under `plots`) and the JSON published together; what was written printed. Exit 1 when
    no `noun` (case, point) could run (`doc[rows]` empty; the reasons are in `skipped`), else 0."""
    def staged(folder: Path) -> None:
        doc["plots"] = [str(plot_dir / p.name) for p in reports(doc, folder)]

    publish(doc, plot_dir, staged, out_json)
    print(f"wrote {out_json} ({len(doc[rows])} {noun}s measured, {len(doc['skipped'])} skipped)")
    for p in doc["plots"]:
        print(f"wrote {p}")
    if not doc[rows]:
        print(f"no {noun} could run; see 'skipped' in the JSON for the reasons", file=sys.stderr)
        return 1
    return 0
