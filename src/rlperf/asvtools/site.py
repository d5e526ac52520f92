"""The post-publish step of asv's site: each graph page opens on a readable default view.

    rlperf site defaults [HTML_DIR=html]     (after `asv publish`; `make publish` runs both)

asv 0.6.6 opens a graph page on every machine and host series at once, with up to 8 parameter points
each, and draws the legend over the plot (graphdisplay.js); nothing in asv.conf.json changes that, only
a selection in the page's URL does. On the committed history the fused-kernel page opened on 21 lines
under 36 legend entries. This step leaves asv's files alone and adds two of its own to the site, linked from
index.html:

* `rlperf-site.js`: a default selection per benchmark, computed here from the published graphs (the
  machine with the longest history, then the parameter points with the most values while the page
  draws at most MAX_LINES lines), applied when a graph page is opened without a selection (the grid's
  and the benchmark tree's links). A URL that selects anything, and any click on the page, is kept
  as it is. It also moves the graph page's legend into a column right of the plot and lists there only
  the lines that have values.
* `rlperf-site.css`: that column's layout.

Only the standard library and asv are imported, so the publish workflow runs it with PYTHONPATH=src.
"""

from __future__ import annotations

import itertools
import json
import math
from importlib import resources
from pathlib import Path

from asv.graph import Graph

from rlperf.atomic import write_text

MAX_LINES = 8  # asv's own cap on the parameter lines of one series (graphdisplay.js)
ASSETS = ("rlperf-site.js", "rlperf-site.css")
_TAGS = ('<link href="rlperf-site.css" rel="stylesheet" type="text/css"/>\n'
         '    <script type="text/javascript" src="rlperf-site.js"></script>\n')
_MARK = "<!-- rlperf.asvtools.site -->"


class SiteError(Exception):
    """The folder is no published asv site (the message says what is missing)."""


def _measured(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def series_values(html: Path, benchmark: str, perm: dict, n_points: int) -> tuple[list[int], set] | None:
    """(values per parameter point, revisions with any value) of one published series; None if absent.

    A point's index is asv's flat index (last parameter fastest), as graphdisplay.js reads it."""
    path = html / (Graph.get_file_path(perm, benchmark) + ".json")
    if not path.is_file():
        return None
    counts, revisions = [0] * n_points, set()
    for revision, values in json.loads(path.read_text()):
        row = values if isinstance(values, list) else [values]
        for i, value in enumerate(row[:n_points]):
            if _measured(value):
                counts[i] += 1
                revisions.add(revision)
    return counts, revisions


def _choose_points(params: list[list[str]], series: list[list[int]], max_lines: int) -> list[list[int]]:
    """Per parameter, the value indices to draw: start at the point with the most values over all series,
    then add one value at a time, the one adding the most values, while the lines with values stay within
    max_lines (a line: one series at one point of the product of the choices)."""
    shape = [len(values) for values in params]
    flat = {point: i for i, point in enumerate(itertools.product(*(range(n) for n in shape)))}

    def score(choice):
        lines = values = 0
        for point in itertools.product(*choice):
            for counts in series:
                if counts[flat[point]]:
                    lines, values = lines + 1, values + counts[flat[point]]
        return lines, values

    best = max(flat, key=lambda p: (sum(c[flat[p]] for c in series), [-i for i in p]))
    choice = [[i] for i in best]
    lines, values = score(choice)
    while True:
        options = []
        for k, n in enumerate(shape):
            for j in range(n):
                if j not in choice[k]:
                    grown = [sorted(c + [j]) if i == k else c for i, c in enumerate(choice)]
                    more_lines, more_values = score(grown)
                    if more_lines <= max_lines and more_values > values:
                        options.append((more_values, -k, -j, grown, more_lines))
        if not options:
            return choice
        values, _, _, choice, lines = max(options, key=lambda o: o[:3])


def default_selection(index: dict, html: Path, max_lines: int = MAX_LINES) -> dict[str, dict[str, list]]:
    """benchmark -> the URL parameters of its default view, for every benchmark with a published value.

    The machine is the one whose series carry values at the most commits (then the most values, then
    the name); all of its host series stay selected, since they are one history measured on different
    hosts (docs/history.md); the parameter points are _choose_points' over those series."""
    out = {}
    for name, bench in sorted(index["benchmarks"].items()):
        params = bench.get("params") or []
        n_points = math.prod(len(values) for values in params) if params else 1
        per_machine: dict[str, list] = {}
        for perm in index["graph_param_list"]:
            found = series_values(html, name, perm, n_points)
            if found and any(found[0]):
                per_machine.setdefault(perm.get("machine"), []).append(found)
        if not per_machine:
            continue

        def rank(machine):
            series = per_machine[machine]
            return (len(set().union(*(revs for _, revs in series))), sum(sum(c) for c, _ in series), machine)

        machine = max(per_machine, key=rank)
        selection = {"machine": [machine]}
        if params:
            choice = _choose_points(params, [counts for counts, _ in per_machine[machine]], max_lines)
            for param_name, values, chosen in zip(bench["param_names"], params, choice):
                selection[f"p-{param_name}"] = [values[j] for j in chosen]
        out[name] = selection
    return out


def install(html: Path, max_lines: int = MAX_LINES) -> dict[str, dict[str, list]]:
    """Write rlperf-site.js/.css into a published site and link them from its index.html (once: a second
    run rewrites the files and leaves the link as it is). Returns the default selections written."""
    index_html, index_json = html / "index.html", html / "index.json"
    for path in (index_html, index_json):
        if not path.is_file():
            raise SiteError(f"no {path}: run `asv publish` first (make publish)")
    page = index_html.read_text()
    if _MARK not in page:
        if "</head>" not in page:
            raise SiteError(f"{index_html} has no </head>: not asv's page, refusing to edit it")
        page = page.replace("</head>", f"  {_MARK}\n    {_TAGS}  </head>", 1)
    defaults = default_selection(json.loads(index_json.read_text()), html, max_lines)
    assets = resources.files("rlperf.asvtools") / "site_assets"
    script = ("/* Written by `rlperf site defaults` after `asv publish` (its docstring says why). */\n"
              f"var RLPERF_DEFAULTS = {json.dumps(defaults, indent=1, sort_keys=True)};\n\n"
              + (assets / "rlperf-site.js").read_text())
    write_text(html / "rlperf-site.js", script)
    write_text(html / "rlperf-site.css", (assets / "rlperf-site.css").read_text())
    write_text(index_html, page)
    return defaults
