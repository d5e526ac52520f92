#!/usr/bin/env bash
# Fetches the libraries asv's site loads from CDNs as npm packages into DEST, for pages checked or
# screenshot on a box without internet (rlperf.asvtools.site_vendor points a copy of the site at them).
#
#   scripts/site_js.sh [DEST=/tmp/site-js]
#
# Needs npm and the npm registry. A package already unpacked in DEST is kept (a second run fetches
# nothing). The versions are the ones asv 0.6.6's index.html links to.
set -euo pipefail
DEST=${1:-/tmp/site-js}
PACKAGES=(jquery@3.3.1 flot@0.8.3 flot-orderbars@1.0.0 stupid-table-plugin@1.1.3 blueimp-md5@2.19.0 bootstrap@3.1.1)
command -v npm >/dev/null || { echo "site_js: npm not found" >&2; exit 2; }
mkdir -p "$DEST"
cd "$DEST"
for p in "${PACKAGES[@]}"; do
  name=${p%@*}
  [ -f "$name/package.json" ] && continue
  work=$(mktemp -d)
  tarball=$(cd "$work" && npm pack --silent "$p")
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "$name"
  mv "$work/package" "$name"
  rm -rf "$work"
done
echo "site_js: ${#PACKAGES[@]} libraries in $DEST"
