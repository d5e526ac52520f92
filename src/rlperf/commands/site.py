"""`rlperf site`: after `asv publish`, give the site readable default views; check it in a browser.

    rlperf site defaults [HTML]             # each graph page opens on <= 8 lines, legend beside the plot
    rlperf site check [HTML] [--site-js D]  # headless Chromium: every benchmark with values draws, no page error
    rlperf site vendor SITE LIBS            # point a copy of the site at local copies of asv's CDN libraries

Exit codes: 0 ok, 1 the browser check found a failure, 2 bad input (no site, no browser, bad library folder).
Only asv and the standard library are needed (the publish workflow runs it with PYTHONPATH=src).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rlperf.errors import UsageError


def add_parser(sub, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="{defaults,check,vendor}", required=True)
    d = actions.add_parser("defaults", help="write rlperf-site.js/.css and link them from index.html")
    d.add_argument("html", nargs="?", default="html", help="the folder `asv publish` wrote")
    c = actions.add_parser("check", help="open every graph page with values in headless Chromium")
    c.add_argument("html", nargs="?", default="html", help="the published site")
    c.add_argument("--site-js", default=os.environ.get("SITE_JS") or None,
                   help="folder of asv's CDN libraries (scripts/site_js.sh makes it; default: $SITE_JS)")
    c.add_argument("--browser", default=None, help="Chromium to use (default: chromium on PATH)")
    v = actions.add_parser("vendor", help="rewrite a copy of the site's CDN links to local library copies")
    v.add_argument("site", help="a copy of the published site (rewritten in place)")
    v.add_argument("libs", help="folder of asv's CDN libraries (scripts/site_js.sh makes it)")


def _defaults(args) -> int:
    from rlperf.asvtools.site import SiteError, install

    try:
        defaults = install(Path(args.html))
    except SiteError as exc:
        raise UsageError(str(exc)) from None
    print(f"site: default views for {len(defaults)} benchmarks with values -> {args.html}/rlperf-site.js")
    return 0


def _check(args) -> int:
    from rlperf.asvtools.browser import BrowserError, find_chromium
    from rlperf.asvtools.site_check import check
    from rlperf.asvtools.site_vendor import VendorError

    html = Path(args.html)
    browser = args.browser or find_chromium()
    if not (html / "index.json").is_file():
        raise UsageError(f"no {html}/index.json: publish the site first (make publish)")
    if not browser:
        raise UsageError("chromium not found: apt-get install -y chromium, or pass --browser PATH")
    try:
        report = check(html, browser, Path(args.site_js) if args.site_js else None)
    except (BrowserError, VendorError) as exc:
        raise UsageError(str(exc)) from None
    for name, page in sorted(report.pages.items()):
        print(f"  {name}: {page['drawn']} lines, legend {page['legend_rows']} rows beside the plot")
    for failure in report.failures:
        print(f"rlperf site check: FAIL {failure}", file=sys.stderr)
    print(f"site check: {len(report.pages)} graph pages, {report.graph_404s} absent series files, "
          f"{len(report.failures)} failures, {report.seconds:.1f} s")
    return 1 if report.failures else 0


def _vendor(args) -> int:
    from rlperf.asvtools.site_vendor import VendorError, vendor

    try:
        vendor(Path(args.site), Path(args.libs))
    except VendorError as exc:
        raise UsageError(str(exc)) from None
    return 0


def run(args) -> int:
    return {"defaults": _defaults, "check": _check, "vendor": _vendor}[args.action](args)
