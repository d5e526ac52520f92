"""The project's asv.conf.json: the settings the suite relies on, and `asv check --python=same` passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from asv import util as asv_util
from asv.config import Config

ROOT = Path(__file__).resolve().parents[2]

PLACEHOLDER = '''
class Placeholder:
    def setup(self):
        self.data = list(range(100))

    def time_sum(self):
        sum(self.data)

    def track_value(self):
        return {"samples": [1.0, 1.1, 0.9], "number": 1}
    track_value.unit = "ms"
'''


def test_conf_settings_the_suite_relies_on():
    conf = Config.load(str(ROOT / "asv.conf.json"))
    assert (conf.benchmark_dir, conf.results_dir, conf.html_dir) == ("benchmarks", "results/asv", "html")
    assert (conf.launch_method, conf.branches, conf.environment_type) == ("spawn", ["main"], "virtualenv")
    assert conf.default_benchmark_timeout >= 600
    assert all("--no-deps" in cmd for cmd in conf.install_command)
    assert conf.matrix["req"]["asv_runner"] == ["0.3.2"]
    assert conf.show_commit_url.startswith("https://")


def test_asv_check_passes_with_the_project_conf(tmp_path):
    conf = asv_util.load_json(str(ROOT / "asv.conf.json"), js_comments=True)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "bench_placeholder.py").write_text(PLACEHOLDER)
    asv_util.write_json(str(tmp_path / "asv.conf.json"), conf)
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    proc = subprocess.run([sys.executable, "-m", "asv", "check", "--python=same"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
