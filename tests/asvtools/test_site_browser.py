"""The committed history's site, read in headless Chromium (rlperf.asvtools.site_check).

Needs Debian's chromium and the site's CDN libraries in $SITE_JS (scripts/site_js.sh); without either
these tests skip, unless RLPERF_REQUIRE_BROWSER=1 (set by .ci/run, which installs both) makes that a
failure. One check of the site as published takes ~10 s on 2 cores."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rlperf.asvtools.browser import find_chromium
from rlperf.asvtools.site import MAX_LINES, install
from rlperf.asvtools.site_check import benchmarks_with_values, check
from tests.asvtools.site_fixtures import publish_committed

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def _needs() -> tuple[str, Path]:
    browser, site_js = find_chromium(), os.environ.get("SITE_JS")
    missing = [what for what, ok in (("chromium (apt-get install -y chromium)", browser),
                                     ("SITE_JS (scripts/site_js.sh /tmp/site-js; export SITE_JS=/tmp/site-js)",
                                      site_js and Path(site_js).is_dir())) if not ok]
    if missing:
        reason = "needs " + " and ".join(missing)
        if os.environ.get("RLPERF_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " (RLPERF_REQUIRE_BROWSER=1)")
        pytest.skip(reason)
    return browser, Path(site_js)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    browser, site_js = _needs()
    html, _ = publish_committed(tmp_path_factory.mktemp("published"))
    install(html)
    return html, browser, site_js


def test_the_committed_site_reads_well_in_a_browser(published):
    html, browser, site_js = published
    report = check(html, browser, site_js)
    assert not report.failures, "\n".join(report.failures)
    names = benchmarks_with_values(html)
    assert len(names) >= 5  # the committed history as migrated: a fixture that lost it must fail
    assert sorted(report.pages) == names
    for name, page in report.pages.items():
        assert 1 <= page["drawn"] == page["legend_rows"] <= MAX_LINES, (name, page)
    fused = report.pages["bench_env.EnvFused.time_fused"]["hash"]["params"]
    assert fused["machine"] == ["cpu-2vcpu-amd-epyc"]  # the backfilled history, not a one-commit box


def test_the_check_sees_asvs_own_view_and_a_page_error(published, tmp_path):
    """The same site with the page-side half taken out (asv's defaults and legend) and a script that
    throws: the check must say so, or its passing above means nothing."""
    html, browser, site_js = published
    bare = tmp_path / "html"
    shutil.copytree(html, bare)
    (bare / "rlperf-site.js").write_text("var RLPERF_DEFAULTS = {};\n"
                                         "$(document).ready(function () { throw new Error('rlperf-test-boom'); });\n")
    failures = "\n".join(check(bare, browser, site_js, timeout=8).failures)  # the grid's wait runs out here
    fused = "bench_env.EnvFused.time_fused:"
    assert f"{fused} opened with {{}}, not its default view" in failures, failures
    assert f"{fused} a legend is drawn inside the plot" in failures, failures
    assert "lines (readable: 1 to" in failures, failures  # asv's all-machines view of some benchmark
    assert "rlperf-test-boom" in failures, failures
