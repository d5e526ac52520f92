"""rlperf.asvtools.site: the default view of each graph page, the files it adds to asv's site, and
rlperf.asvtools.site_vendor: the offline copy of the site's CDN libraries.

The sites here are written by hand in asv's published layout (index.json + one JSON series per graph
path, asv.graph.Graph.get_file_path), so each case is a few files and no `asv publish`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asv.graph import Graph

from rlperf.asvtools import site, site_vendor
from rlperf.asvtools.site import _choose_points, default_selection, install
from rlperf.cli import main

BENCH = "bench_x.Suite.time_kernel"
PARAMS = [["'walk'", "'probe'", "'track'"], ["1", "2", "4", "8"]]


def _perm(machine: str, cpu_flags: str = "aaaa") -> dict:
    return {"machine": machine, "cpu_flags": cpu_flags, "python": "/venv/bin/python", "branch": "main"}


def _site(tmp_path: Path, series: dict[tuple, list], benchmarks: dict | None = None) -> Path:
    """A published site: `series` maps (benchmark, perm items) to its rows [[revision, values], ...]."""
    html = tmp_path / "html"
    html.mkdir()
    perms = []
    for (name, perm_items), rows in series.items():
        perm = dict(perm_items)
        if perm not in perms:
            perms.append(perm)
        path = html / (Graph.get_file_path(perm, name) + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows))
    benchmarks = benchmarks or {BENCH: {"params": PARAMS, "param_names": ["task", "threads"]}}
    (html / "index.json").write_text(json.dumps({"benchmarks": benchmarks, "graph_param_list": perms}))
    (html / "index.html").write_text("<html><head>\n<title>asv</title>\n</head><body></body></html>\n")
    return html


def _row(revision: int, points: dict[int, float]) -> list:
    """One commit's values at asv's flat indices (task-major, threads fastest), None elsewhere."""
    return [revision, [points.get(i) for i in range(12)]]


def _key(perm: dict) -> tuple:
    return tuple(perm.items())


# --- which parameter points ---------------------------------------------------------------------------

def test_the_start_is_the_point_with_the_most_values():
    counts = [0] * 12
    counts[5], counts[2] = 9, 3  # (probe, 2) and (walk, 4)
    assert _choose_points(PARAMS, [counts], max_lines=1) == [[1], [1]]


def test_points_are_added_while_the_lines_with_values_stay_within_the_cap():
    counts = [5] * 12  # every point measured: 12 lines at most
    for cap in (1, 2, 4, 6, 8):
        choice = _choose_points(PARAMS, [counts, counts], max_lines=cap)  # two host series: 2 lines a point
        points = len(choice[0]) * len(choice[1])
        assert 2 * points <= max(cap, 2), (cap, choice)
    assert _choose_points(PARAMS, [counts], max_lines=12) == [[0, 1, 2], [0, 1, 2, 3]]


def test_a_point_without_values_is_never_added():
    counts = [0] * 12
    counts[0] = counts[4] = 7  # (walk, 1) and (probe, 1) only
    assert _choose_points(PARAMS, [counts], max_lines=8) == [[0, 1], [0]]


def test_the_value_adding_the_most_values_comes_first():
    counts = [0] * 12
    counts[0], counts[1], counts[4] = 10, 2, 9  # (walk,1)=10, (walk,2)=2, (probe,1)=9
    assert _choose_points(PARAMS, [counts], max_lines=2) == [[0, 1], [0]]


# --- which machine, and the URL parameters ------------------------------------------------------------

def test_the_machine_with_the_longest_history_is_the_default(tmp_path):
    rows_cpu = [_row(r, {0: 1.0}) for r in range(1, 11)]  # 10 commits, one point
    rows_gpu = [_row(20, {i: 0.5 for i in range(12)})]  # 1 commit, every point: more values
    html = _site(tmp_path, {(BENCH, _key(_perm("cpu-box"))): rows_cpu, (BENCH, _key(_perm("gpu-box"))): rows_gpu})
    assert default_selection(json.loads((html / "index.json").read_text()), html) == {
        BENCH: {"machine": ["cpu-box"], "p-task": ["'walk'"], "p-threads": ["1"]}}


def test_every_host_series_of_the_machine_counts_and_absent_series_are_skipped(tmp_path):
    old, new = _perm("cpu-box", "aaaa"), _perm("cpu-box", "bbbb")
    rows_old = [_row(r, {0: 1.0, 4: 2.0}) for r in range(1, 6)]
    rows_new = [_row(r, {0: 1.1, 4: 2.1}) for r in range(6, 9)]
    html = _site(tmp_path, {(BENCH, _key(old)): rows_old, (BENCH, _key(new)): rows_new})
    index = json.loads((html / "index.json").read_text())
    index["graph_param_list"].append(_perm("cpu-box", "never-ran-it"))  # no file: asv 404s it, so do we
    got = default_selection(index, html, max_lines=4)
    assert got == {BENCH: {"machine": ["cpu-box"], "p-task": ["'walk'", "'probe'"], "p-threads": ["1"]}}
    assert default_selection(index, html, max_lines=3)[BENCH]["p-task"] == ["'walk'"]  # 2 series x 2 tasks > 3


def test_a_benchmark_without_values_gets_no_default_and_one_without_params_only_a_machine(tmp_path):
    benchmarks = {BENCH: {"params": PARAMS, "param_names": ["task", "threads"]},
                  "bench_x.Suite.track_plain": {"params": [], "param_names": []}}
    html = _site(tmp_path, {(BENCH, _key(_perm("cpu-box"))): [[1, None], [2, [None] * 12]],
                            ("bench_x.Suite.track_plain", _key(_perm("cpu-box"))): [[1, 3.0], [2, 2.5]]},
                 benchmarks)
    got = default_selection(json.loads((html / "index.json").read_text()), html)
    assert got == {"bench_x.Suite.track_plain": {"machine": ["cpu-box"]}}


# --- the files added to the site ----------------------------------------------------------------------

def test_install_writes_the_defaults_and_links_its_files_once(tmp_path):
    html = _site(tmp_path, {(BENCH, _key(_perm("cpu-box"))): [_row(1, {0: 1.0})]})
    install(html)
    install(html)  # `make publish` twice, or the step run by hand after it
    page = (html / "index.html").read_text()
    assert page.count('src="rlperf-site.js"') == 1 and page.count('href="rlperf-site.css"') == 1
    assert page.index("rlperf-site.js") < page.index("</head>")
    script = (html / "rlperf-site.js").read_text()
    written = json.loads(script.split("var RLPERF_DEFAULTS = ", 1)[1].split(";\n", 1)[0])
    assert written == {BENCH: {"machine": ["cpu-box"], "p-task": ["'walk'"], "p-threads": ["1"]}}
    assert "$.plot = " in script and "replaceState" in script  # the page-side half, from site_assets
    assert "#rlperf-legend" in (html / "rlperf-site.css").read_text()


def test_a_folder_that_is_no_published_site_is_refused_with_exit_2(tmp_path, capsys):
    assert main(["site", "defaults", str(tmp_path)]) == 2
    assert "run `asv publish` first" in capsys.readouterr().err
    assert not (tmp_path / "rlperf-site.js").exists()


def test_a_page_without_a_head_is_not_edited(tmp_path):
    html = _site(tmp_path, {(BENCH, _key(_perm("cpu-box"))): [_row(1, {0: 1.0})]})
    (html / "index.html").write_text("<html><body>not asv</body></html>")
    with pytest.raises(site.SiteError, match="no </head>"):
        install(html)
    assert (html / "index.html").read_text() == "<html><body>not asv</body></html>"


# --- offline copies of the CDN libraries --------------------------------------------------------------

def test_vendor_points_cdn_links_at_local_copies(tmp_path):
    page = ('<script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-x" crossorigin="anonymous">'
            '</script><link rel="stylesheet" href="https://cdn.example/bootstrap@3.1.1/dist/css/bootstrap.min.css">'
            '<script src="asv.js"></script>')
    (tmp_path / "index.html").write_text(page)
    libs = tmp_path / "libs"
    (libs / "jquery" / "dist").mkdir(parents=True)
    (libs / "jquery" / "dist" / "jquery.min.js").write_text("/* jq */")
    (libs / "bootstrap" / "dist" / "css").mkdir(parents=True)
    (libs / "bootstrap" / "dist" / "css" / "bootstrap.min.css").write_text("/* bs */")
    replaced = site_vendor.vendor(tmp_path, libs)
    text = (tmp_path / "index.html").read_text()
    assert len(replaced) == 2 and "https://" not in text and "integrity" not in text and 'src="asv.js"' in text
    assert (tmp_path / "vendor" / "jquery-3.3.1.min.js").read_text() == "/* jq */"


def test_vendor_names_a_library_it_has_no_copy_of(tmp_path):
    (tmp_path / "index.html").write_text('<script src="https://cdn.example/flot/0.8.3/jquery.flot.min.js"></script>')
    (tmp_path / "libs").mkdir()
    with pytest.raises(site_vendor.VendorError, match="jquery.flot.min.js"):
        site_vendor.vendor(tmp_path, tmp_path / "libs")
