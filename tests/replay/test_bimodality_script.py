"""scripts/host_compact_bimodality.py: conditions interleaved round by round, bad input refused with exit 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "host_compact_bimodality.py"


def _script():
    spec = importlib.util.spec_from_file_location("host_compact_bimodality", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_round_runs_each_condition_once_and_forced_ones_stop_at_their_count():
    sched = _script()._schedule(["base", "mmap"], rounds=3, forced_rounds=2)
    assert sched == [(0, "base"), (0, "mmap"), (1, "base"), (1, "mmap"), (2, "base")]


def test_an_unknown_condition_exits_2_naming_the_valid_ones_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert _script().main(["--out", str(out), "--conditions", "base,hugepages"]) == 2
    err = capsys.readouterr().err
    assert "hugepages" in err and "small-pages" in err and not out.exists()
