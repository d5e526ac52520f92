"""rlperf.asvtools.store: a run's results are merged into a shared results folder point by point, under a
lock, each file replaced whole. Result files are built here in asv 0.6's own layout (asv.results.Results.save)
and every merged file is read back with asv's loader and the gate's."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from asv.results import Results

from tests.gate_fixtures import COLUMNS, HOST, PYTHON
from rlperf.asvtools import fingerprint, store
from rlperf.errors import InfrastructureError
from rlperf.gate.results import load_commit
from rlperf import atomic

MACHINE = HOST["machine"]
SHA = "a1b2c3d4" + "0" * 32
ENV = "existing-py"
GRID = [["'walk'", "'probe'"], ["1", "2"]]  # a parameterised benchmark: task x threads
P = "bench_env.K.time_fused"


def entry(values, *, params=None, version="v1"):
    """One benchmark's row: values is one number (unparameterised) or {combo: number} over `params`."""
    params = params or []
    combos = list(itertools.product(*params))
    if not params:
        values = {(): values}
    result = [values.get(c, math.nan) for c in combos]
    stats = [None if _na(v) else v for v in result]
    samples = [None if _na(v) else [v, v * 1.01] for v in result]
    return [result, params, version, 0, 1.0, stats, stats, stats, stats,
            [None if s is None else 1 for s in stats], [None if s is None else 2 for s in stats], samples]


def _na(v) -> bool:
    return v is None or math.isnan(v)


def doc(results: dict, *, host=None) -> dict:
    params = {**HOST, **PYTHON, **(host or {})}
    return {"commit_hash": SHA, "env_name": ENV, "date": 0, "params": params, "python": params["python"],
            "requirements": {}, "env_vars": {}, "result_columns": COLUMNS, "results": results,
            "durations": {"<build>": 1.0}, "version": 2}


def write_run(folder: Path, results: dict, *, host=None, meta=None) -> Path:
    """What one asv run leaves in its own results folder: the result file, machine.json, benchmarks.json."""
    (folder / MACHINE).mkdir(parents=True, exist_ok=True)
    path = folder / MACHINE / f"{SHA[:8]}-{ENV}.json"
    path.write_text(json.dumps(doc(results, host=host)))
    (folder / MACHINE / "machine.json").write_text(json.dumps({**HOST, **(host or {}), "version": 1}))
    (folder / "benchmarks.json").write_text(json.dumps({**(meta or {n: {"version": "v1"} for n in results}),
                                                        "version": 2}))
    return path


def stored_path(results: Path) -> Path:
    return results / MACHINE / f"{SHA[:8]}-{ENV}.json"


def values(results: Path) -> dict[str, float | None]:
    """point name -> stored value, through the gate's loader (asv's Results.load underneath)."""
    Results.load(str(stored_path(results)), machine_name=MACHINE)  # asv itself must read the file
    return {name: p.value for (_, name), p in load_commit(str(results), MACHINE, SHA).points.items()}


def publish(tmp: Path, run: dict, *, bench=None, host=None, meta=None, **kw) -> list[str]:
    source = tmp / f"run-{len(list(tmp.glob('run-*')))}"
    write_run(source, run, host=host, meta=meta)
    return store.publish(str(tmp / "results"), MACHINE, str(source), [SHA], bench=bench, **kw)


def name(combo) -> str:
    return f"{P}({', '.join(combo)})"


# --- merge ---------------------------------------------------------------------------------------------

def test_a_subset_run_keeps_what_it_did_not_measure_and_replaces_what_it_did(tmp_path):
    """The lost-data bug: a walk-only `--bench` run replaced the commit's file, probe points and all."""
    full = {combo: 1.0 for combo in itertools.product(*GRID)}
    publish(tmp_path, {P: entry(full, params=GRID), "bench_env.K.track_parity": entry(0.0)})
    # asv --bench "'walk'": only the walk cells ran; the probe cells are NaN, the other benchmark absent
    publish(tmp_path, {P: entry({("'walk'", "1"): 2.0, ("'walk'", "2"): 3.0}, params=GRID)}, bench="'walk'")
    got = values(tmp_path / "results")
    assert got[name(("'walk'", "1"))] == 2.0 and got[name(("'walk'", "2"))] == 3.0  # measured now: replaced
    assert got[name(("'probe'", "1"))] == 1.0 and got[name(("'probe'", "2"))] == 1.0  # not measured: kept
    assert got["bench_env.K.track_parity"] == 0.0
    point = load_commit(str(tmp_path / "results"), MACHINE, SHA).points[("existing-py", name(("'probe'", "2")))]
    assert point.samples == [1.0, 1.01] and point.stats["q_25"] == 1.0  # the stored cell whole, not just its value


def test_a_point_the_run_selected_and_found_skipped_or_failed_replaces_the_stored_value(tmp_path):
    publish(tmp_path, {P: entry({c: 1.0 for c in itertools.product(*GRID)}, params=GRID)})
    now = entry({("'walk'", "1"): 2.0, ("'walk'", "2"): None}, params=GRID)  # walk-2 fails, probe skipped
    publish(tmp_path, {P: now})  # no --bench: every cell was selected, so NaN means skipped now
    got = values(tmp_path / "results")
    assert got[name(("'walk'", "1"))] == 2.0 and got[name(("'walk'", "2"))] is None
    assert math.isnan(got[name(("'probe'", "1"))])


def test_a_new_parameter_value_widens_the_grid_and_the_old_values_stay(tmp_path):
    publish(tmp_path, {P: entry({c: 1.0 for c in itertools.product(*GRID)}, params=GRID)})
    wider = [["'walk'", "'probe'"], ["1", "4"]]  # the suite now runs 4 threads instead of 2, same code version
    publish(tmp_path, {P: entry({c: 5.0 for c in itertools.product(*wider)}, params=wider)})
    got = values(tmp_path / "results")
    assert got[name(("'walk'", "2"))] == 1.0 and got[name(("'walk'", "4"))] == 5.0 and got[name(("'probe'", "1"))] == 5.0


def test_a_changed_benchmark_version_takes_the_runs_entry_whole_and_names_what_it_dropped(tmp_path):
    publish(tmp_path, {P: entry({c: 1.0 for c in itertools.product(*GRID)}, params=GRID)})
    notes = publish(tmp_path, {P: entry({("'walk'", "1"): 2.0}, params=GRID, version="v2")}, bench="'walk', 1")
    got = values(tmp_path / "results")
    assert got[name(("'walk'", "1"))] == 2.0
    assert all(math.isnan(got[name(c)]) for c in itertools.product(*GRID) if c != ("'walk'", "1"))
    assert Results.load(str(stored_path(tmp_path / "results"))).benchmark_version[P] == "v2"
    assert len(notes) == 1 and "version changed" in notes[0] and "3 stored point(s)" in notes[0]
    assert name(("'probe'", "2")) in notes[0]


def test_a_file_of_another_environment_is_kept_unless_the_run_remeasured_all_of_it(tmp_path):
    fp = {"schema": fingerprint.SCHEMA, "static": {"kernel": "6.18.44"}, "measured": {}}
    publish(tmp_path, {P: entry({c: 1.0 for c in itertools.product(*GRID)}, params=GRID), "b.S.time_y": entry(1.0)},
            fingerprint=fp)
    before = stored_path(tmp_path / "results").read_bytes()
    other = {"os": "Linux 6.8.0-49-generic"}
    notes = publish(tmp_path, {P: entry({c: 2.0 for c in itertools.product(*GRID)}, params=GRID)}, host=other,
                    fingerprint={**fp, "static": {"kernel": "6.8.0"}})
    assert stored_path(tmp_path / "results").read_bytes() == before  # b.S.time_y would end up under the new host
    assert "not stored" in notes[0] and "params.os" in notes[0] and "b.S.time_y" in notes[0]
    assert fingerprint.load(str(tmp_path / "results"), MACHINE, SHA) == fp  # the kept file's session
    publish(tmp_path, {P: entry({c: 2.0 for c in itertools.product(*GRID)}, params=GRID), "b.S.time_y": entry(3.0)},
            host=other)  # every stored point measured again: the file is the new environment's
    assert values(tmp_path / "results")["b.S.time_y"] == 3.0
    assert json.loads(stored_path(tmp_path / "results").read_text())["params"]["os"] == other["os"]


def test_benchmarks_json_keeps_entries_the_run_did_not_have(tmp_path):
    publish(tmp_path, {"a.A.time_a": entry(1.0)}, meta={"a.A.time_a": {"version": "v1", "unit": "seconds"}})
    publish(tmp_path, {"b.B.time_b": entry(1.0)}, meta={"b.B.time_b": {"version": "v1"},
                                                        "a.A.time_a": {"version": "v2", "unit": "seconds"}})
    meta = json.loads((tmp_path / "results" / "benchmarks.json").read_text())
    assert meta["a.A.time_a"]["version"] == "v2" and "b.B.time_b" in meta and meta["version"] == 2
    assert set(values(tmp_path / "results")) == {"a.A.time_a", "b.B.time_b"}


def test_publish_stores_the_fingerprint_and_machine_file_with_the_results(tmp_path):
    fp = {"schema": fingerprint.SCHEMA, "static": {"cpu_flags_sha256": "abc"}, "measured": {}}
    publish(tmp_path, {"a.A.time_a": entry(1.0)}, fingerprint=fp)
    results = tmp_path / "results"
    assert fingerprint.load(str(results), MACHINE, SHA) == fp
    assert json.loads((results / MACHINE / "machine.json").read_text())["machine"] == MACHINE
    assert (results / store.LOCK_NAME).read_text() == ""  # released: no holder recorded


def test_another_commits_file_is_a_refusal_not_a_merge(tmp_path):
    publish(tmp_path, {"a.A.time_a": entry(1.0)})
    stored = json.loads(stored_path(tmp_path / "results").read_text())
    other = {**stored, "commit_hash": SHA[:8] + "f" * 32}
    with pytest.raises(InfrastructureError, match="prefix collision"):
        store.merge_result(stored, other)


# --- the lock ------------------------------------------------------------------------------------------

def test_a_second_writer_waits_for_the_first_and_both_points_are_kept(tmp_path):
    """Two gates on one folder: today the head file kept only the other gate's point."""
    publish(tmp_path, {"a.A.time_a": entry(1.0)})
    said, done = [], threading.Event()
    with store.locked(str(tmp_path / "results")):
        second = threading.Thread(target=lambda: (publish(tmp_path, {"b.B.time_b": entry(2.0)}, wait_s=30,
                                                          echo=said.append), done.set()))
        second.start()
        time.sleep(0.5)
        assert not done.is_set() and "waiting" in said[0] and f"pid {os.getpid()}" in said[0]
        assert set(values(tmp_path / "results")) == {"a.A.time_a"}  # nothing written while the lock is held
        source = tmp_path / "held"
        write_run(source, {"c.C.time_c": entry(3.0)})  # the holder's own publish, inside its lock
        first = json.loads(stored_path(tmp_path / "results").read_text())
        merged, _ = store.merge_result(first, json.loads(next((source / MACHINE).glob("*-*.json")).read_text()))
        atomic.write_text(stored_path(tmp_path / "results"), json.dumps(merged))
    second.join(10)
    assert done.is_set()
    assert values(tmp_path / "results") == {"a.A.time_a": 1.0, "b.B.time_b": 2.0, "c.C.time_c": 3.0}


HOLDER = """
import sys, time
from rlperf.asvtools import store
with store.locked(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_writer_that_waits_too_long_gets_an_infrastructure_error_naming_the_holder(tmp_path):
    publish(tmp_path, {"a.A.time_a": entry(1.0)})
    before = stored_path(tmp_path / "results").read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "results")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        start = time.monotonic()
        with pytest.raises(InfrastructureError, match=f"pid {holder.pid} ") as err:
            publish(tmp_path, {"a.A.time_a": entry(9.0)}, wait_s=0.3)
        assert time.monotonic() - start >= 0.3 and "nothing was stored" in str(err.value)
        assert stored_path(tmp_path / "results").read_bytes() == before
    finally:
        holder.stdin.close()
        holder.wait(10)
    publish(tmp_path, {"a.A.time_a": entry(9.0)}, wait_s=5)  # released with its process
    assert values(tmp_path / "results")["a.A.time_a"] == 9.0


# --- atomic writes -------------------------------------------------------------------------------------

def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_an_exception_between_the_temp_write_and_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    publish(tmp_path, {"a.A.time_a": entry(1.0)})
    before = stored_path(tmp_path / "results").read_bytes()

    def broken(src, dst):
        assert Path(src).read_text()  # the temp file was written whole
        raise OSError("disk pulled")

    monkeypatch.setattr(atomic.os, "replace", broken)
    with pytest.raises(OSError, match="disk pulled"):
        publish(tmp_path, {"a.A.time_a": entry(2.0)})
    assert stored_path(tmp_path / "results").read_bytes() == before
    assert _leftovers(tmp_path / "results" / MACHINE) == []  # the temp file went with the error


KILLED = """
import os, signal, sys
from rlperf import atomic
from rlperf.asvtools import store
atomic.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
store.publish(sys.argv[1], sys.argv[2], sys.argv[3], [sys.argv[4]])
"""


def test_a_writer_killed_before_the_rename_leaves_the_old_file_and_releases_the_lock(tmp_path):
    publish(tmp_path, {"a.A.time_a": entry(1.0)})
    before = stored_path(tmp_path / "results").read_bytes()
    source = tmp_path / "killed-run"
    write_run(source, {"a.A.time_a": entry(2.0)})
    proc = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path / "results"), MACHINE, str(source), SHA],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    assert stored_path(tmp_path / "results").read_bytes() == before
    # at most a hidden temp file, which asv never reads as a result (it reads *.json only)
    assert all(not name.endswith(".json") for name in _leftovers(tmp_path / "results" / MACHINE))
    publish(tmp_path, {"a.A.time_a": entry(3.0)}, wait_s=5)  # the kernel released the dead writer's lock
    assert values(tmp_path / "results")["a.A.time_a"] == 3.0
