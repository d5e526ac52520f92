"""`rlperf env` end to end with tiny env counts: outputs, skips, summaries and bad input."""

import json

import pytest

from rlperf.cli import build_parser, main
from rlperf.envs import registry

TINY = ["--num-envs", "33,64", "--threads", "1,2,512", "--iters", "2", "--warmup", "1"]


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("env") / "probe" / "results.json"
    return out, main(["env", "--task", "probe", *TINY, "--out-json", str(out), "--json"])


def test_a_run_writes_json_chart_and_report_side_by_side(probe_run):
    out, rc = probe_run
    assert rc == 0
    assert out.is_file() and (out.parent / "probe_summary.png").is_file() and (out.parent / "report.md").is_file()
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["schema_version"]) == ("rlperf.env", 1)
    assert doc["meta"]["threading_layer"] and doc["meta"]["compile_ms"] > 0 and doc["meta"]["machine"]["cpu"]
    case = doc["results"][0]
    assert case["numba"]["samples_ms"] and case["numba"]["median_ms"] == case["numba_ms"]
    assert case["parity"]["ok"] and case["parallel_efficiency"] == 1.0


def test_threads_above_the_machine_are_recorded_as_skipped_with_a_reason(probe_run):
    doc = json.loads(probe_run[0].read_text())
    assert 512 in doc["meta"]["skipped_threads"]
    assert all("512 threads requested" in s["reason"] for s in doc["skipped"])


def test_json_flag_prints_one_summary_object(probe_run, capsys):
    out, _ = probe_run
    main(["env", "--plot-only", str(out), "--plot-dir", str(out.parent), "--json"])
    summary = json.loads(capsys.readouterr().out)
    for case in summary["cases"]:
        assert {"numpy_ms", "numba_ms", "speedup", "threads", "num_envs", "parity_ok"} <= set(case)


def test_plot_only_rerenders_without_measuring(probe_run, capsys):
    out, _ = probe_run
    (out.parent / "report.md").unlink()
    assert main(["env", "--plot-only", str(out), "--plot-dir", str(out.parent)]) == 0
    assert (out.parent / "report.md").read_text().startswith("# probe")


def test_plot_only_writes_under_out_by_default_never_next_to_its_input(probe_run, tmp_path, monkeypatch):
    out, _ = probe_run
    before = {p.name: p.stat().st_mtime_ns for p in out.parent.iterdir()}
    monkeypatch.chdir(tmp_path)
    assert main(["env", "--plot-only", str(out)]) == 0
    assert (tmp_path / "out/env/plot-only/report.md").read_text().startswith("# probe")
    assert {p.name: p.stat().st_mtime_ns for p in out.parent.iterdir()} == before


def test_plot_only_on_malformed_rows_exits_2_and_writes_nothing(probe_run, tmp_path, capsys):
    doc = json.loads(probe_run[0].read_text())
    del doc["results"][0]["numba_ms"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["env", "--plot-only", str(bad), "--plot-dir", str(tmp_path / "plots")]) == 2
    assert f"{bad}: malformed rows" in capsys.readouterr().err
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["bad.json"]


@pytest.mark.parametrize("argv, message", [
    (["--task", "g1_run"], "valid: g1_motion_tracking, g1_walk_flat, probe"),
    (["--task", "g1_walk_flat", "--profiles", "sac"], "valid: ppo_default, sac_default, full_supported"),
    (["--num-envs", "512,0"], "--num-envs: '0' is not a positive integer"),
    (["--threads", "1,two"], "--threads: 'two' is not a positive integer"),
    (["--num-envs", "1.5"], "positive integer"),
    (["--iters", "0"], "--iters"),
    (["--task", "probe", "--threads", "999", "--num-envs", "64"], "nothing would be measured; valid: 1.."),
    (["--task", "probe", "--num-envs", str(10**12)], "--num-envs: host memory: 1,000,000,000,000 envs of probe"),
    (["--profiles", ","], "--profiles: empty list; valid: "),
])
def test_bad_input_exits_2_naming_the_problem_and_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "r" / "results.json"
    assert main(["env", *argv, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_plot_only_rejects_a_foreign_or_unreadable_json(tmp_path, capsys):
    foreign = tmp_path / "other.json"
    foreign.write_text(json.dumps({"schema": "rlperf.replay", "schema_version": 1}))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for path in (foreign, broken, tmp_path / "missing.json"):
        assert main(["env", "--plot-only", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not an rlperf 'rlperf.env' result" in err and "not valid JSON" in err and "no such file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "other.json"]


def test_motion_tracking_without_its_package_fails_clearly(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(registry.PACKAGES, "g1_motion_tracking", "rlperf.envs.not_there_yet")
    assert main(["env", "--task", "g1_motion_tracking", "--out-json", str(tmp_path / "x.json")]) == 2
    assert "not available" in capsys.readouterr().err


def test_an_unwritable_out_json_is_refused_before_anything_is_measured(tmp_path, capsys, monkeypatch):
    from rlperf.envs import harness

    def never(*args, **kwargs):
        raise AssertionError("measured before checking the output path")

    monkeypatch.setattr(harness, "prepare", never)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["env", "--task", "probe", "--threads", "1", "--num-envs", "64",
                 "--out-json", str(blocker / "r" / "results.json")]) == 2
    assert "cannot write there" in capsys.readouterr().err


def test_quick_uses_thread_counts_this_machine_has(monkeypatch):
    from rlperf.commands.env import _plan
    from rlperf.envs import threads

    monkeypatch.setattr(threads, "max_numba_threads", lambda: 2)
    args = build_parser(["env"]).parse_args(["env", "--quick", "--task", "probe", "--out-json", "/tmp/x/r.json"])
    assert _plan(args)["requested"] == [1, 2]
    monkeypatch.setattr(threads, "max_numba_threads", lambda: 1)
    assert _plan(args)["requested"] == [1]


def test_a_busy_machine_is_warned_about():
    from rlperf.measure.load import busy_warning

    assert busy_warning(cores=2, load=1.9) is None
    text = busy_warning(cores=2, load=41.0)
    assert "load average 41.0 is above this machine's 2 cores" in text
