"""scripts/site_screenshot.sh says what failed instead of ending silently (set -e used to end it without a
word when the browser failed, or when the rendered page held no <canvas>: grep's status under pipefail).
A fake `chromium` on PATH stands in for the browser; the script's own http.server serves a tiny site."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE = """#!/bin/sh
if [ -n "$FAKE_FAIL" ]; then echo "fake chromium: cannot open display" >&2; exit 3; fi
for a in "$@"; do
  case "$a" in
    --screenshot=*) printf 'png' > "${a#--screenshot=}" ;;
    --dump-dom) printf '%s\\n' "$FAKE_DOM" ;;
  esac
done
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def run(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "chromium").write_text(FAKE)
    (bin_dir / "chromium").chmod(0o755)
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<html></html>")
    (html / "index.json").write_text('{"benchmarks": {"bench_x.T.time_a": {}}}')

    def go(**env):
        full = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PY": sys.executable,
                "PORT": str(_free_port()), **env}
        return subprocess.run(["bash", str(ROOT / "scripts" / "site_screenshot.sh"), str(html),
                               str(tmp_path / "shot.png")], capture_output=True, text=True, env=full, timeout=60)
    return go


def test_a_page_without_graphs_says_so_and_fails(run):
    proc = run(FAKE_DOM="<html><body>no graphs</body></html>")
    assert proc.returncode == 1 and "no graph rendered" in proc.stderr, proc.stderr


def test_a_failing_browser_is_named_with_its_output(run):
    proc = run(FAKE_FAIL="1")
    assert proc.returncode == 1, proc.stderr
    assert "failed to screenshot" in proc.stderr and "cannot open display" in proc.stderr, proc.stderr


def test_a_rendered_graph_passes_with_its_canvas_count(run):
    proc = run(FAKE_DOM="<html><canvas></canvas><canvas></canvas></html>")
    assert proc.returncode == 0 and "(2 canvas elements)" in proc.stdout, proc.stdout + proc.stderr
