"""The pass and batch-scaling probe scripts: a record is never replaced, bad input exits 2 before anything is
measured, and `--summarize` tabulates records without measuring."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from rlperf.replay import pass_probe

DEVICE = Path(__file__).resolve().parents[2] / "scripts" / "device"


def _run(name: str, argv: list[str], monkeypatch) -> int:
    spec = importlib.util.spec_from_file_location(name, DEVICE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(sys, "argv", [name, *argv])
    try:
        return mod.main()
    except SystemExit as e:
        return e.code


@pytest.mark.parametrize("name", ["probe_pass", "probe_batch_scaling"])
def test_an_existing_record_is_never_replaced_and_no_out_is_refused(name, tmp_path, monkeypatch, capsys):
    out = tmp_path / "rec.json"
    out.write_text("{}")
    assert _run(name, ["--out", str(out)], monkeypatch) == 2
    assert "exists; records are never replaced" in capsys.readouterr().err and out.read_text() == "{}"
    assert _run(name, [], monkeypatch) == 2
    assert "measuring needs --out" in capsys.readouterr().err


def test_bad_input_exits_2_naming_the_choices_and_writes_nothing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "rec.json"
    assert _run("probe_pass", ["--out", str(out), "--placement", "gpu-fused"], monkeypatch) == 2
    assert "valid:" in capsys.readouterr().err and not out.exists()
    assert _run("probe_batch_scaling", ["--out", str(out), "--placements", "gpu"], monkeypatch) == 2
    assert "valid: gpu-fused, gpu-fused-bf16" in capsys.readouterr().err and not out.exists()
    assert _run("probe_batch_scaling", ["--out", str(out), "--sizes", "8k"], monkeypatch) == 2
    assert "comma-separated integers" in capsys.readouterr().err and not out.exists()


def test_a_measured_record_is_written_once_and_summarized(tmp_path, monkeypatch, capsys):
    out, md = tmp_path / "rec.json", tmp_path / "rec.md"
    args = ["--out", str(out), "--capacity-exponent", "16", "--rounds", "1", "--repeat", "1", "--threads", "1",
            "--modes", ",".join(pass_probe.CPU_MODES)]
    assert _run("probe_pass", args, monkeypatch) == 0
    assert json.loads(out.read_text())["modes"] == list(pass_probe.CPU_MODES)
    assert _run("probe_pass", ["--summarize", str(out), "--out-md", str(md)], monkeypatch) == 0
    assert "| cpu-after-spin / cpu |" in md.read_text()
