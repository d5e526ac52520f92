"""Point a copy of asv's site at local copies of the libraries its pages load from CDNs.

    rlperf site vendor SITE_COPY LIBS

asv's pages load jQuery, flot, bootstrap, stupidtable and md5 from CDNs, which a box without internet
(CI, a runner) cannot reach. LIBS is a folder holding those libraries as their npm packages unpack
(`scripts/site_js.sh LIBS` makes it); each CDN link of SITE_COPY's pages is rewritten to a copy under
SITE_COPY/vendor/ (integrity attributes dropped: the file is the npm package's, not the CDN's bytes).
Edit a copy, never the published html/: the site itself keeps its CDN links.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

_CDN = re.compile(r'(src|href)="(https://[^"]+\.(?:js|css))"')
_PINNING = re.compile(r'\s(?:integrity|crossorigin|referrerpolicy)="[^"]*"')


class VendorError(Exception):
    """A library the site links to has no local copy under LIBS."""


def _library_files(libs: Path) -> list[Path]:
    return [p for p in sorted(libs.rglob("*.*s")) if not {"src", "docs", "test"} & set(p.parts)]


def _local_name(url: str, files: list[Path]) -> Path | None:
    name = url.rsplit("/", 1)[-1]
    wanted = [name, name.replace(".min.", "."), re.sub(r"-[\d.]+\.min\.js$", ".min.js", name)]
    for want in wanted:
        for path in files:
            if path.name == want:
                return path
    return None


def vendor(site: Path, libs: Path) -> list[str]:
    """Rewrite every page of `site` to load its CDN libraries from site/vendor/; the URLs replaced."""
    if not libs.is_dir():
        raise VendorError(f"no folder {libs} (make it with scripts/site_js.sh {libs})")
    files = _library_files(libs)
    (site / "vendor").mkdir(exist_ok=True)
    replaced = []

    def local(match):
        url = match[2]
        path = _local_name(url, files)
        if path is None:
            raise VendorError(f"no local copy of {url} under {libs} (scripts/site_js.sh {libs} makes them)")
        shutil.copy(path, site / "vendor" / url.rsplit("/", 1)[-1])
        replaced.append(url)
        return f'{match[1]}="vendor/{url.rsplit("/", 1)[-1]}"'

    for page in sorted(site.glob("*.html")):
        page.write_text(_CDN.sub(local, _PINNING.sub("", page.read_text())))
    return replaced
