"""scripts/stamp_host_facet.py: results stored before the cpu_flags facet get their commit's recorded
value or 'unrecorded', in their own layout, and asv then draws one series per CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlperf.asvtools import fingerprint
from rlperf.asvtools.host_facet import stamp_machine
from rlperf.gate.exitcodes import InfrastructureError

ROOT = Path(__file__).resolve().parents[2]
MACHINE = "box"
PARAMS = {"arch": "x86_64", "cpu": "AMD EPYC", "machine": MACHINE, "num_cpu": "2", "python": "3.12"}


def _result(sha: str, **layout) -> tuple[dict, str]:
    doc = {"commit_hash": sha, "env_name": "existing-py", "date": 1, "params": dict(PARAMS),
           "results": {"m.time_x": [[0.5], None]}, "version": 2}
    return doc, json.dumps(doc, **layout)


@pytest.fixture
def results(tmp_path):
    folder = tmp_path / MACHINE
    folder.mkdir()
    for sha, layout in (("a" * 40, {}), ("b" * 40, {"separators": (",", ":")})):
        (folder / f"{sha[:8]}-existing-py.json").write_text(_result(sha, **layout)[1])
    (folder / "machine.json").write_text(json.dumps({**PARAMS, "version": 1}, indent=4))
    fingerprint.store(str(tmp_path), MACHINE, "a" * 40,
                      {"schema": fingerprint.SCHEMA, "static": {"cpu_flags_sha256": "f00d"},
                       "measured_at": "2026-12-02T00:00:00Z"})
    return tmp_path


def _read(results, name):
    return (results / MACHINE / name).read_text()


def test_each_result_gets_its_own_commits_value_or_unrecorded(results):
    stamps = {Path(s.path).name: (s.value, s.source) for s in stamp_machine(str(results), MACHINE)}
    assert stamps["aaaaaaaa-existing-py.json"] == ("f00d", f"{MACHINE}/fingerprints/aaaaaaaa.fingerprint")
    assert stamps["bbbbbbbb-existing-py.json"] == ("unrecorded", "none stored")
    assert stamps["machine.json"] == ("f00d", "newest fingerprint")
    a = json.loads(_read(results, "aaaaaaaa-existing-py.json"))
    assert list(a["params"])[:3] == ["arch", "cpu", "cpu_flags"] and a["params"]["cpu_flags"] == "f00d"
    assert json.loads(_read(results, "machine.json"))["cpu_flags"] == "f00d"


def test_every_file_keeps_its_layout_and_everything_else(results):
    stamp_machine(str(results), MACHINE)
    for sha, layout in (("a", {}), ("b", {"separators": (",", ":")})):
        text = _read(results, f"{sha * 8}-existing-py.json")
        doc = json.loads(text)
        assert text == json.dumps(doc, **layout)
        value = doc["params"].pop("cpu_flags")
        assert value and doc == _result(sha * 40)[0]
    assert _read(results, "machine.json") == json.dumps(json.loads(_read(results, "machine.json")), indent=4)


def test_a_second_stamp_changes_nothing(results):
    stamp_machine(str(results), MACHINE)
    before = {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")}
    assert {s.source for s in stamp_machine(str(results), MACHINE)} == {"already set"}
    assert {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")} == before


def test_a_dry_run_writes_nothing(results):
    before = {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")}
    assert len(stamp_machine(str(results), MACHINE, write=False)) == 3
    assert {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")} == before


def test_a_layout_it_cannot_reproduce_is_refused_untouched(results):
    odd = results / MACHINE / "cccccccc-existing-py.json"
    odd.write_text(json.dumps(_result("c" * 40)[0], indent=3))
    before = odd.read_bytes()
    with pytest.raises(InfrastructureError, match="cccccccc-existing-py.json: its JSON layout"):
        stamp_machine(str(results), MACHINE)
    assert odd.read_bytes() == before


def _script(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "stamp_host_facet.py"), *args],
                          capture_output=True, text=True)


def test_the_script_names_the_machines_it_knows_and_exits_2(results):
    proc = _script("--results-dir", str(results), "nope")
    assert proc.returncode == 2 and "no results for nope" in proc.stderr and MACHINE in proc.stderr


def test_the_script_exits_5_on_an_unreadable_result(results):
    (results / MACHINE / "dddddddd-existing-py.json").write_text("{not json")
    before = {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")}
    proc = _script("--results-dir", str(results), MACHINE)
    assert proc.returncode == 5 and "dddddddd-existing-py.json: not a readable asv file" in proc.stderr
    assert {p.name: p.read_bytes() for p in (results / MACHINE).glob("*.json")} == before  # none stamped
