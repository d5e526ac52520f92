"""`rlperf machine`: the asv machine file carries the identity facets, and asv reads it back."""

from __future__ import annotations

import json

import pytest
from asv.machine import Machine

from rlperf.asvtools.machine_file import machine_entry
from rlperf.cli import main
from rlperf.measure.machine import machine_identity, machine_name

FACETS = ("cpu", "cpu_flags", "num_cpu", "ram", "gpu", "gpu_count", "gpu_memory", "driver", "cuda", "torch", "numba")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RLPERF_MACHINE", raising=False)
    return tmp_path


def test_entry_has_every_facet_as_text_and_no_volatile_fields():
    entry = machine_entry(name="box")
    assert entry["machine"] == "box"
    assert all(isinstance(entry[k], str) and entry[k] for k in FACETS)
    assert "ram_available_bytes_at_start" not in entry


def test_write_creates_the_file_asv_reads(home, capsys):
    assert main(["machine", "--write", "--name", "ci-box"]) == 0
    assert "ci-box" in capsys.readouterr().out
    stored = json.loads((home / ".asv-machine.json").read_text())
    assert stored["version"] == 1 and stored["ci-box"]["numba"] == machine_identity()["numba"]
    loaded = Machine.load(machine_name="ci-box")
    assert loaded.torch == stored["ci-box"]["torch"]


def test_write_keeps_other_machines(home):
    assert main(["machine", "--write", "--name", "a"]) == 0
    assert main(["machine", "--write", "--name", "b"]) == 0
    assert {"a", "b"} <= set(json.loads((home / ".asv-machine.json").read_text()))


def test_print_name_and_json(home, capsys, monkeypatch):
    assert main(["machine", "--print-name"]) == 0
    assert capsys.readouterr().out.strip() == machine_name()
    monkeypatch.setenv("RLPERF_MACHINE", "pinned")
    assert main(["machine", "--print-name"]) == 0
    assert capsys.readouterr().out.strip() == "pinned"
    assert main(["machine", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["num_cpu"] >= 1


def test_name_without_write_is_a_usage_error(home, capsys):
    assert main(["machine", "--name", "x"]) == 2
    assert "--write" in capsys.readouterr().err


def test_the_cpu_flags_facet_is_the_fingerprints_hash():
    from rlperf.asvtools.fingerprint import static_facts

    assert machine_entry(name="box")["cpu_flags"] == static_facts()["cpu_flags_sha256"]


def test_a_stale_entry_is_rewritten_and_a_current_one_left_alone(home, monkeypatch):
    """A runner's home that outlives its host must not stamp the new host's results with old facts."""
    from rlperf.asvtools import run_commit

    stale = {**machine_entry(name="runner"), "cpu_flags": "0ld0ld0ld0ld0ld0"}
    (home / ".asv-machine.json").write_text(json.dumps({"runner": stale, "version": 1}))
    run_commit.ensure_machine("runner")
    assert json.loads((home / ".asv-machine.json").read_text())["runner"] == machine_entry(name="runner")
    monkeypatch.setattr(run_commit, "write_machine_file", lambda **kw: pytest.fail("rewrote a current entry"))
    run_commit.ensure_machine("runner")


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"version": 1, "box": 3}'])
def test_a_corrupt_machine_file_is_exit_2_naming_it_and_left_untouched(home, capsys, content):
    path = home / ".asv-machine.json"
    path.write_text(content)
    assert main(["machine", "--write", "--name", "box"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and f"mv {path} {path}.bak" in err
    assert path.read_text() == content
