"""`asv publish` of the committed results/asv into a temporary folder (tests of the published site)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from asv import util as asv_util

ROOT = Path(__file__).resolve().parents[2]


def publish_committed(out: Path) -> tuple[Path, str]:
    """(html folder, asv's output) of `asv publish` on the committed results, with the branch set to HEAD
    (a fresh clone may lack a local `main`; every stored commit is an ancestor of HEAD)."""
    conf = asv_util.load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    conf.update(repo=str(ROOT), branches=["HEAD"], results_dir=str(ROOT / conf["results_dir"]),
                html_dir=str(out / "html"), benchmark_dir=str(ROOT / conf["benchmark_dir"]))
    path = out / "asv.conf.json"
    path.write_text(json.dumps(conf))
    proc = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(path)], capture_output=True,
                          text=True, cwd=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "html", proc.stdout + proc.stderr
