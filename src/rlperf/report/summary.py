"""results/SUMMARY.md: the headline numbers, generated from the committed result files only.

    rlperf summary [--results results] > results/SUMMARY.md

Every number printed here is read from a result file that records its machine and command; the
README links to this file instead of quoting figures by hand. Layout under --results: `asv/` (asv's
database: one folder per machine), `reports/replay/<machine>/` and `reports/env/<machine>/<task>/` (the
CLI reports). A report folder holding a SUPERSEDED.md is listed with that note and without its
"x floor" column: its floors came from a ceiling measurement since replaced.
"""

from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

from rlperf.replay.metrics import LABELS
from rlperf.report.tables import markdown_table

HEADLINE_ENVS = (8192, 32768)
ASV_DIR, REPLAY_GLOB, ENV_GLOB = "asv", "reports/replay/*/results.json", "reports/env/*/*/results.json"
E2E_GLOB = "reports/e2e/*/*/results.json"
SUPERSEDED = "SUPERSEDED.md"


def superseded_note(folder: Path) -> str | None:
    """The first paragraph of a folder's SUPERSEDED.md, or None when the folder is current."""
    path = folder / SUPERSEDED
    if not path.is_file():
        return None
    paragraphs = [p for p in path.read_text().split("\n\n") if p.strip() and not p.startswith("#")]
    return " ".join(paragraphs[0].split()) if paragraphs else "superseded"


def _fmt(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _when(doc: dict) -> str:
    """When the results were measured: the document's time, or for parts merged into one report each part's."""
    parts = doc.get("parts") or []
    if len(parts) < 2:
        return doc["created_at"]
    return "parts measured " + ", ".join(p["created_at"] for p in parts)


def replay_lines(root: Path) -> list[str]:
    lines = ["## Replay placements (`rlperf replay`)", ""]
    for path in sorted(root.glob(REPLAY_GLOB)):
        doc = json.loads(path.read_text())
        note = superseded_note(path.parent)
        lines += [f"### {doc['machine']['name']}", ""]
        if note:
            lines += [f"**Superseded** ({path.parent / SUPERSEDED}): {note}", ""]
        lines += [f"- machine: {doc['device_info']}", f"- command: `{doc['command']}` ({_when(doc)})",
                  f"- file: `{path}`", ""]
        rows = [[res["placement"], f"{res['capacity_rows']:,}", LABELS[metric], f"{t['median_ms']:.3f}",
                 f"{t['min_ms']:.3f}", *([] if note else [_fmt(t.get("x_floor"), 2)])]
                for res in doc["results"] for metric, t in res["timings"].items()]
        headers = ["placement", "capacity rows", "metric", "median ms", "min ms", *([] if note else ["x floor"])]
        lines += markdown_table(headers, rows, align="lrlrrr"[:len(headers)]) + [""]
    return lines


def asv_gpu_sample_lines(root: Path) -> list[str]:
    """GPU sample medians from asv result files (one row per placement and capacity that ran)."""
    lines = ["## GPU sample in the asv history (`bench_replay.ReplayGpuSample.track_ms`)", ""]
    for path in sorted(root.glob(f"{ASV_DIR}/*/*-*.json")):
        doc = json.loads(path.read_text())
        bench = doc.get("results", {}).get("bench_replay.ReplayGpuSample.track_ms")
        if not bench or "params" not in doc:
            continue
        cols = doc["result_columns"]
        values, params = bench[cols.index("result")], bench[cols.index("params")]
        samples = bench[cols.index("samples")] if "samples" in cols and len(bench) > cols.index("samples") else None
        lines += [f"### {doc['params'].get('machine')} @ {doc['commit_hash'][:8]}", "",
                  f"- file: `{path}`", ""]
        rows = [[combo[0], combo[1].strip("'"), combo[2], f"{value:.4f}",
                 len(samples[k]) if samples and samples[k] else None]
                for k, (combo, value) in enumerate(zip(itertools.product(*params), values))
                if value is not None and value == value]  # n/a points (None, NaN): skipped with a reason
        lines += markdown_table(["capacity exp", "placement", "GPUs", "median ms", "samples"], rows,
                                align="rlrrr") + [""]
    return lines


def asv_history_lines(root: Path) -> list[str]:
    """Per machine: how many commits asv holds, the first and last, and the suites measured."""
    rows = []
    for folder in sorted(p for p in (root / ASV_DIR).glob("*") if (p / "machine.json").is_file()):
        docs = [json.loads(p.read_text()) for p in folder.glob("*-*.json")]
        docs.sort(key=lambda d: (d.get("date") or 0, d.get("commit_hash") or ""))  # same input, same text
        if not docs:
            continue
        names = {n for d in docs for n, v in d.get("results", {}).items() if v and v[0] is not None}
        rows.append([folder.name, len({d["commit_hash"] for d in docs}), docs[0]["commit_hash"][:8],
                     docs[-1]["commit_hash"][:8], len(names)])
    return (["## asv history (`results/asv/`, the site and the gate)", ""]
            + markdown_table(["machine", "commits", "first", "last", "benchmarks with a value"], rows, align="lrllr")
            + [""])


def _cmd(meta: dict) -> str:
    command = meta.get("command")
    return f"`{command}`" if command else "not stored in this file (older schema): see PROVENANCE.md beside it"


def env_lines(root: Path) -> list[str]:
    lines = ["## Env kernels (`rlperf env`)", "",
             "Best thread count per env count; speedup = numpy ms / numba ms (medians); parity at noise 0.", ""]
    for path in sorted(root.glob(ENV_GLOB)):
        doc = json.loads(path.read_text())
        meta = doc["meta"]
        lines += [f"### {meta['task']} on {meta['machine']['name']}", "",
                  f"- machine: {meta['device_line']}; threading layer {meta['threading_layer']}; "
                  f"compile {meta['compile_ms']:.0f} ms ({meta.get('compile_source', '?')})",
                  f"- command: {_cmd(meta)} ({meta['timestamp_utc']})",
                  f"- file: `{path}`; parity ok in every case: {all(r['parity_ok'] for r in doc['results'])}", ""]
        table = []
        for n in HEADLINE_ENVS:
            rows = [r for r in doc["results"] if r["num_envs"] == n]
            if not rows:
                continue
            best = min(rows, key=lambda r: r["numba_ms"])
            one = next((r["numba_ms"] for r in rows if r["threads"] == 1), None)
            table.append([f"{n:,}", f"{statistics.median(r['numpy_ms'] for r in rows):.3f}", f"{best['numba_ms']:.3f}",
                          best["threads"], f"{best['speedup_vs_numpy']:.1f}x", _fmt(one)])
        lines += markdown_table(["envs", "numpy ms", "best numba ms", "threads", "speedup", "numba 1 thread ms"],
                                table, align="rrrrrr") + [""]
    return lines


def e2e_lines(root: Path) -> list[str]:
    """Each committed `rlperf e2e` run as its own report.md renders it (one renderer), headings demoted."""
    from rlperf.report.e2e_report import report_lines

    lines = ["## End-to-end SAC iteration (`rlperf e2e`)", ""]
    for path in sorted(root.glob(E2E_GLOB)):
        doc = json.loads(path.read_text())
        lines += [f"### {path.parent.name} on {doc['machine'].get('name', '?')}", "", f"- file: `{path}`"]
        lines += [("###" + line[1:] if line.startswith("## ") else line) for line in report_lines(doc)[1:]]
        lines.append("")
    return lines


def history_lines(root: Path) -> list[str]:
    """The steps e-divisive finds in asv's history (`rlperf history`), with the thresholds of the
    asv.conf.json beside the results folder (asv's defaults when there is none)."""
    from rlperf.report import history_steps
    from rlperf.history.detect import DEFAULT_METHOD
    from rlperf.history.scan import read_asv_conf, scan

    conf = root.parent / "asv.conf.json"
    thresholds = read_asv_conf(conf).thresholds if conf.is_file() else {}
    lines = ["## Steps in the asv history (`rlperf history`)", "",
             f"Change points by {DEFAULT_METHOD} per benchmark point, machine and host series "
             "(docs/history.md); a range is `last commit at the old level..first at the new`.", ""]
    if not any((root / ASV_DIR).glob("*/machine.json")):
        return lines + ["No asv results with a machine folder.", ""]
    return lines + history_steps.lines(scan(root / ASV_DIR, thresholds, DEFAULT_METHOD), DEFAULT_METHOD) + [""]


def summary_text(results: Path) -> str:
    """The whole of results/SUMMARY.md for the result files under `results`."""
    lines = ["# Results summary", "", "Generated by `rlperf summary` from the files under "
             "`results/`; do not edit by hand.", ""]
    lines += (replay_lines(results) + asv_history_lines(results) + history_lines(results)
              + asv_gpu_sample_lines(results)
              + env_lines(results) + e2e_lines(results))
    return "\n".join(lines)


if __name__ == "__main__":  # `python -m rlperf.report.summary [--results DIR]` (hooks, older notes): the text
    import sys             # `rlperf summary` prints, without this report module reaching up to the CLI

    argv = sys.argv[1:]
    folder = Path(argv[argv.index("--results") + 1]) if "--results" in argv[:-1] else Path("results")
    if not folder.is_dir():
        print(f"rlperf.report.summary: {folder} is not a results folder; give --results DIR", file=sys.stderr)
        raise SystemExit(2)
    print(summary_text(folder))
