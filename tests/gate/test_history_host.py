"""A machine's history holds one host: --backfill refuses (5) before measuring on a host whose static
fingerprint differs from the newest stored one (on 2026-12-02 the 2-vCPU box came back as a Zen 5 host
under the same asv strings, only the CPU flags hash differing)."""

from __future__ import annotations

import pytest

from rlperf.asvtools import fingerprint
from rlperf.gate import flow
from rlperf.gate.exitcodes import GateExit

SHA = "a" * 40


def _store(results, sha: str, static: dict, at: str) -> None:
    fingerprint.store(str(results), "box", sha, {"schema": fingerprint.SCHEMA, "static": static, "measured": {},
                                                 "measured_at": at})


@pytest.fixture
def where(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(flow, "backfill_commits", lambda where, spec: [SHA])
    monkeypatch.setattr(flow, "_run", lambda where, sha, echo: ran.append(sha) or 0)
    return flow.Where(repo=str(tmp_path), results_dir=str(tmp_path / "results"), machine="box",
                      conf=str(tmp_path / "asv.conf.json")), ran


def test_a_history_from_another_host_is_refused_before_anything_is_measured(where):
    w, ran = where
    here = fingerprint.static_facts()
    _store(w.results_dir, "b" * 40, {**here, "cpu_flags_sha256": "0" * 16}, "2026-12-02T05:00:00Z")
    code, messages = flow.backfill(w, "NEW:main")
    assert code == GateExit.INFRASTRUCTURE and ran == []
    assert "cpu_flags_sha256" in messages[0] and "--machine NEW-NAME" in messages[0]
    assert "--allow-host-change" in messages[0] and "kernel" not in messages[0]  # only what differs


def test_allow_host_change_appends_and_says_so(where):
    w, ran = where
    _store(w.results_dir, "b" * 40, {**fingerprint.static_facts(), "num_cpu": 999}, "2026-12-02T05:00:00Z")
    code, messages = flow.backfill(w, "NEW:main", allow_host_change=True)
    assert code == GateExit.OK and ran == [SHA] and messages[0].startswith("HOST CHANGED")
    assert "own series" in messages[0]  # the host facts are result params: a line of its own, not a step


def test_the_newest_fingerprint_is_the_history_host(where):
    w, ran = where
    here = fingerprint.static_facts()
    _store(w.results_dir, "c" * 40, {**here, "cpu": "old host"}, "2026-11-01T00:00:00Z")
    _store(w.results_dir, "b" * 40, here, "2026-12-02T00:00:00Z")
    assert flow.backfill(w, "NEW:main")[0] == GateExit.OK and ran == [SHA]


def test_a_history_without_fingerprints_is_not_refused(where):
    w, ran = where
    assert flow.history_host_change(w) == [] and flow.backfill(w, "A..B")[0] == GateExit.OK and ran == [SHA]


def test_a_gate_under_another_hosts_factors_says_so(tmp_path):
    """The gate's derived factors are one host's noise: judged on another host, the verdict notes it (2026-12-05:
    a 2-vCPU Intel box gated under the AMD box's machine name, and nothing said so)."""
    from rlperf.gate.host import foreign_factors_note

    results = tmp_path / "results"
    assert foreign_factors_note(str(results), "box") is None  # no fingerprint yet: nothing to compare
    _store(results, "b" * 40, fingerprint.static_facts(), "2026-12-02T05:00:00Z")
    assert foreign_factors_note(str(results), "box") is None
    _store(results, "c" * 40, {**fingerprint.static_facts(), "cpu": "AMD EPYC"}, "2026-12-03T05:00:00Z")
    note = foreign_factors_note(str(results), "box")
    assert "'box'" in note and "AMD EPYC" in note and "rlperf machine --print-name" in note


def test_the_note_joins_the_verdict_only_when_derived_factors_are_in_use(tmp_path):
    from types import SimpleNamespace

    from rlperf.commands.gate import _note_foreign_factors
    from rlperf.gate.thresholds import Threshold

    _store(tmp_path / "results", "c" * 40, {**fingerprint.static_facts(), "cpu": "AMD EPYC"}, "2026-12-03T05:00:00Z")
    where = flow.Where(repo=str(tmp_path), results_dir=str(tmp_path / ".asv"), machine="box",
                       conf=str(tmp_path / "asv.conf.json"))  # no asv.conf.json: the history is results/
    derived = Threshold(name="p", source="history", n=9, sigma=0.05, factor=1.2, detail="")
    for table, notes in (({}, 0), ({"p": derived}, 1)):
        verdict = SimpleNamespace(notes=[])
        _note_foreign_factors(verdict, SimpleNamespace(table=table), where)
        assert len(verdict.notes) == notes
