"""Read the published site in headless Chromium as a person would, and say what is wrong with it.

    rlperf site check [HTML_DIR=html] [--site-js DIR] [--browser PATH]

On a served copy of the site (asv's pages load JSON by XHR, which file:// blocks; with --site-js, or
$SITE_JS, the copy loads its CDN libraries from that folder, see rlperf.asvtools.site_vendor):
  * the grid (index.html#/) draws a graph with values for every benchmark that has any (two values or
    more as a line, a single one as a dot);
  * each such benchmark's graph page, opened from a bare #benchmark link as the grid links it, takes the
    default view rlperf.asvtools.site wrote, draws 1 to MAX_LINES lines, lists exactly those in the
    legend column, and no legend lies over the plot;
  * no page error: no uncaught exception, no console error, no failed load except a series file
    (graphs/...json) that asv asks for under a host that never ran the benchmark.
Exit 0 when all hold; 1 listing every failure; 2 when the site, the browser or the libraries are missing.
"""

from __future__ import annotations

import functools
import json
import math
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from rlperf.asvtools.browser import Browser
from rlperf.asvtools.site import MAX_LINES, default_selection
from rlperf.asvtools.site_vendor import vendor

# A graph page is read once its plot stopped changing for this many polls with no XHR in flight.
_SETTLED_POLLS = 3

_GRID_MISSING = """(function (names) {
    return names.filter(function (name) {
        var plot = $(document.getElementById('summarygrid-' + name)).data('plot');
        return !(plot && plot.getData().some(function (s) {  /* a line needs two values, a dot one */
            var values = s.data.filter(function (p) { return p && p[1] !== null; }).length;
            return values >= 2 || (values == 1 && s.points.show);
        }));
    });
})(%s)"""

_SCROLL_GRID = """(function () {
    for (var y = 0; y <= document.documentElement.scrollHeight; y += 200) {
        window.scrollTo(0, y);
        $(window).trigger('scroll');
    }
    window.scrollTo(0, 0);
    return true;
})()"""

_GRAPH_STATE = """(function () {
    var plot = $('#main-graph').data('plot');
    if (!plot || $.active) { return null; }
    var series = plot.getData();
    var drawn = series.filter(function (s) {
        return s.data.some(function (p) { return p && p[1] !== null && p[1] !== undefined; });
    }).length;
    var legend = document.getElementById('rlperf-legend');
    var box = function (el) {
        if (!el || $(el).css('display') == 'none') { return null; }
        var r = el.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom];
    };
    return {
        hash: $.asv.parse_hash_string(window.location.hash),
        title: $('#title').text(),
        series: series.length,
        drawn: drawn,
        legend_rows: $('#rlperf-legend td.legendLabel').length,
        legend_in_plot: $('#main-graph .legend').length,
        legend_box: box(legend),
        plot_box: box($('#main-graph canvas.flot-base')[0]),
        error: $('#error').is(':visible') ? $('#error-message').text() : null
    };
})()"""


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    pages: dict[str, dict] = field(default_factory=dict)  # benchmark -> what its graph page showed
    graph_404s: int = 0
    seconds: float = 0.0


def benchmarks_with_values(html: Path) -> list[str]:
    """Benchmarks whose summary graph (the grid's) has a value."""
    names = []
    for path in sorted((html / "graphs" / "summary").glob("*.json")):
        if any(y is not None and not (isinstance(y, float) and math.isnan(y)) for _, y in json.loads(path.read_text())):
            names.append(path.name[:-len(".json")])
    return names


def _serve(root: Path) -> ThreadingHTTPServer:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _settled(browser: Browser, timeout: float) -> dict | None:
    deadline, last, same = time.monotonic() + timeout, None, 0
    while time.monotonic() < deadline:
        state = browser.evaluate(_GRAPH_STATE)
        if state is not None and state == last:
            same += 1
            if same >= _SETTLED_POLLS:
                return state
        else:
            same = 0
        last = state
        time.sleep(0.1)
    return None


def _check_graph_page(name: str, state: dict | None, wanted: dict, report: Report) -> None:
    if state is None:
        report.failures.append(f"{name}: the graph page never settled on a plot")
        return
    report.pages[name] = state
    where = f"{name}:"
    if state["error"]:
        report.failures.append(f"{where} asv says {state['error'].strip()!r}")
    params = {k: v for k, v in state["hash"]["params"].items() if k != "benchmark"}
    if params != wanted:
        report.failures.append(f"{where} opened with {params}, not its default view {wanted}")
    if not 1 <= state["drawn"] <= MAX_LINES:
        report.failures.append(f"{where} draws {state['drawn']} lines (readable: 1 to {MAX_LINES})")
    if state["legend_rows"] != state["drawn"]:
        report.failures.append(f"{where} the legend lists {state['legend_rows']} lines, "
                               f"the plot draws {state['drawn']}")
    if state["legend_in_plot"]:
        report.failures.append(f"{where} a legend is drawn inside the plot")
    if state["legend_box"] is None or state["plot_box"] is None:
        report.failures.append(f"{where} no legend column or no plot is shown")
    elif _overlap(state["legend_box"], state["plot_box"]):
        report.failures.append(f"{where} the legend column {state['legend_box']} covers the plot {state['plot_box']}")


def _page_errors(events: list[dict], report: Report) -> None:
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            report.failures.append(f"page error: {text} ({details.get('url', '')}:{details.get('lineNumber', '')})")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            report.failures.append(f"console error: {text}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            entry = params["entry"]
            url = entry.get("url", "")
            if entry.get("source") == "network" and "/graphs/" in url and "404" in entry.get("text", ""):
                report.graph_404s += 1  # a series asv looks for under a host that never ran the benchmark
            else:
                report.failures.append(f"load error: {entry.get('text')} {url}".strip())


def check(html: Path, browser_path: str, site_js: Path | None = None, timeout: float = 20.0) -> Report:
    """Every check of the module docstring on the site in `html`; the failures are in the report."""
    start, report = time.monotonic(), Report()
    index = json.loads((html / "index.json").read_text())
    if not (html / "rlperf-site.js").is_file():
        report.failures.append(f"{html} has no rlperf-site.js: run `rlperf site defaults {html}` "
                               "after asv publish")
        return report
    wanted = default_selection(index, html)
    names = benchmarks_with_values(html)
    if not names:
        report.failures.append("no benchmark has a value: nothing to draw")
    if set(names) != set(wanted):
        report.failures.append(f"benchmarks with values in the grid {sorted(names)} differ from those with a "
                               f"default view {sorted(wanted)}")
    with tempfile.TemporaryDirectory(prefix="rlperf-site-") as tmp:
        root = Path(tmp) / "html"
        shutil.copytree(html, root)
        if site_js is not None:
            vendor(root, site_js)
        server = _serve(root)
        base = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        try:
            with Browser(browser_path, timeout=timeout) as browser:
                browser.navigate(base + "#/")
                browser.wait_for("window.$ && $.asv && $.asv.main_json && $.asv.main_json.benchmarks")
                browser.evaluate(_SCROLL_GRID)
                missing = json.dumps(names)
                if not browser.wait_for(f"{_GRID_MISSING % missing}.length === 0", timeout=timeout):
                    left = browser.evaluate(_GRID_MISSING % missing)
                    report.failures.append(f"the grid draws no values for {left}")
                for i, name in enumerate(sorted(wanted)):
                    if i == 0:  # a fresh load of a bare link, then hash changes as the grid's links make
                        browser.navigate(f"{base}#{name}")
                    else:
                        browser.evaluate(f"$('#main-graph').removeData('plot'); "
                                         f"location.hash = {json.dumps('#' + name)}")
                    _check_graph_page(name, _settled(browser, timeout), wanted[name], report)
                _page_errors(browser.events, report)
        finally:
            server.shutdown()
            server.server_close()
    report.seconds = time.monotonic() - start
    return report
