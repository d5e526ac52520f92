#!/usr/bin/env bash
# Opens the published asv site in headless Chromium and saves a screenshot, to check that graphs render.
#
#   scripts/site_screenshot.sh [HTML_DIR=html] [OUT=docs/site-screenshot.png] [PAGE=#summarylist]
#
# Needs Debian's chromium (`apt-get install -y chromium`) and a site built by `asv publish` (make bench).
# The site is served on 127.0.0.1 (asv's pages load JSON with XHR, which file:// blocks), then the
# rendered DOM is dumped too so the check does not rest on looking at the picture: a graph page that
# rendered has flot's <canvas> elements.
#
# asv's pages load jQuery, flot, bootstrap, stupidtable and md5 from CDNs. On a box without internet,
# point SITE_JS at a folder holding those libraries (`scripts/site_js.sh /tmp/site-js` fetches them with
# npm) and the check runs on a temporary copy of the site whose CDN links point at local copies
# (rlperf.asvtools.site_vendor). `rlperf site check` checks every graph page.
#
# Every failure says what failed on stderr (exit 2: missing tool or site; 1: no graph rendered; any
# other step that fails names its line, command and status instead of ending the script silently).
set -Eeuo pipefail
trap 'rc=$?; echo "site_screenshot: failed (exit $rc) at line $LINENO: $BASH_COMMAND" >&2; exit $rc' ERR
HTML=${1:-html}
OUT=${2:-docs/site-screenshot.png}
PAGE=${3:-}
PORT=${PORT:-8765}
PY=${PY:-.venv/bin/python}
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[ -n "$BROWSER" ] || { echo "site_screenshot: chromium not found (apt-get install -y chromium)" >&2; exit 2; }
[ -f "$HTML/index.html" ] || { echo "site_screenshot: no $HTML/index.html (run make bench or asv publish)" >&2; exit 2; }
[ -x "$PY" ] || command -v "$PY" >/dev/null || { echo "site_screenshot: no Python at $PY (set PY=...)" >&2; exit 2; }
server_log=$(mktemp); browser_log=$(mktemp)  # their output, shown when they fail

if [ -n "${SITE_JS:-}" ]; then
  copy=$(mktemp -d)
  cp -r "$HTML"/. "$copy"
  "$PY" -m rlperf site vendor "$copy" "$SITE_JS"
  HTML=$copy
fi

"$PY" -m http.server "$PORT" --bind 127.0.0.1 --directory "$HTML" >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; [ -n "${copy:-}" ] && rm -rf "$copy"; rm -f "$server_log" "$browser_log"' EXIT
ready=
for _ in $(seq 50); do
  if "$PY" - "$PORT" 2>/dev/null <<'PY'; then ready=1; break; fi  # quiet while the server starts
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/index.html", timeout=1)
PY
  kill -0 "$server" 2>/dev/null || break  # it exited (port taken, bad folder): no point waiting
  sleep 0.1
done
if [ -z "$ready" ]; then
  echo "site_screenshot: the site server on 127.0.0.1:$PORT did not answer (another PORT=...?); its output:" >&2
  cat "$server_log" >&2
  exit 1
fi

# Without PAGE, show the graph of the first benchmark listed in the site's index.
if [ -z "$PAGE" ]; then
  PAGE=$("$PY" - "$HTML" <<'PY'
import json, sys
index = json.load(open(f"{sys.argv[1]}/index.json"))
names = sorted(index.get("benchmarks", {}))
print(f"#{names[0]}" if names else "")
PY
)
fi
URL="http://127.0.0.1:$PORT/index.html$PAGE"
mkdir -p "$(dirname "$OUT")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000
       --virtual-time-budget=15000 --run-all-compositor-stages-before-draw)
browse() {  # $BROWSER with the flags; on failure its output goes to stderr with what was asked of it
  local what=$1; shift
  if ! "$BROWSER" "${flags[@]}" "$@" 2>"$browser_log"; then
    echo "site_screenshot: $BROWSER failed to $what $URL; its output:" >&2
    tail -n 20 "$browser_log" >&2
    exit 1
  fi
}
browse "screenshot" --screenshot="$OUT" "$URL" >/dev/null
[ -s "$OUT" ] || { echo "site_screenshot: $BROWSER exited 0 but wrote no $OUT" >&2; exit 1; }
dom=$(browse "dump the DOM of" --dump-dom "$URL")
canvases=$(grep -o '<canvas' <<<"$dom" | wc -l || true)  # grep finds none: 0, not a silent exit
echo "site_screenshot: $URL -> $OUT ($canvases canvas elements)"
[ "$canvases" -gt 0 ] || { echo "site_screenshot: no graph rendered" >&2; exit 1; }
