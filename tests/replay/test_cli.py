"""`rlperf replay` on a CPU machine: valid JSON + PNG, --plot-only, and exit code 2 on bad input."""

import json

import pytest

from rlperf.cli import main

SMALL = ["replay", "--capacity-rows", "4096,8192", "--placements", "host,gpu", "--gpu-counts", "1,2",
         "--warmup", "0", "--repeat", "2", "--torch-threads", "1", "--no-ceilings"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay")
    assert main([*SMALL, "--out-json", str(out / "results.json")]) == 0
    return out


def test_the_cli_writes_a_versioned_json_with_timings_and_skips(run_dir):
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["schema"] == "rlperf.replay" and doc["schema_version"] == 1
    assert doc["machine"]["num_cpu"] >= 1 and doc["workload"]["row_bytes"] == 3720
    host = [r for r in doc["results"] if r["placement"] == "host"]
    assert {r["capacity_rows"] for r in host} == {4096, 8192}
    timing = host[0]["timings"]["cpu_sample_wall"]
    assert len(timing["samples_ms"]) == 2 and timing["mean_ms"] > 0
    reasons = " ".join(s["reason"] for s in doc["skipped"])
    assert "needs 2 GPUs" in reasons


def test_the_cli_writes_the_chart_and_analysis(run_dir):
    png = run_dir / "sac_replay_sampling_component_breakdown.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| GPUs | Capacity rows |" in " ".join((run_dir / "analysis.md").read_text().split())


def test_plot_only_rebuilds_charts_from_a_saved_json(run_dir, tmp_path):
    assert main(["replay", "--plot-only", str(run_dir / "results.json"), "--plot-dir", str(tmp_path)]) == 0
    assert (tmp_path / "sac_replay_sampling_component_breakdown.png").exists()
    assert (tmp_path / "analysis.md").exists()


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"schema": "rlperf.env", "schema_version": 1}', "not an rlperf 'rlperf.replay' result"),
    ('{"schema": "rlperf.replay", "schema_version": 99}', "schema_version 99"),
    ('{"schema": "rlperf.replay", "schema_version": 1}', "missing key"),
])
def test_plot_only_rejects_malformed_or_foreign_json_with_exit_2(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["replay", "--plot-only", str(bad), "--plot-dir", str(tmp_path / "plots")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "plots").exists()


@pytest.mark.parametrize("flags, message", [
    (["--placements", "host,warp"], "unknown placement 'warp'"),
    (["--gpu-counts", "0"], "--gpu-counts"),
    (["--capacity-exponents", "20,x"], "--capacity-exponents"),
    (["--task", "g1_fly"], "unknown task"),
    (["--repeat", "0"], "--repeat"),
    (["--torch-threads", "-2"], "--torch-threads"),
])
def test_bad_flags_exit_2_and_write_nothing(tmp_path, capsys, flags, message):
    out = tmp_path / "r" / "results.json"
    assert main(["replay", *flags, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.parent.exists()


def test_layouts_prints_every_layouts_bytes_from_the_arithmetic(capsys):
    assert main(["replay", "--layouts"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # table cells are padded: compare them space-collapsed
    assert "| fp32 | float32 | float32 | float32 | no | 3,720 | 3,720 | 116.25 | no |" in out
    assert "| compact | bfloat16 | bfloat16 | uint8 | yes | 976 | 1,872 | 58.50 | yes |" in out


def test_a_combination_from_configuration_is_measured_with_its_layout_bytes(tmp_path):
    out = tmp_path / "results.json"
    flags = ["replay", "--capacity-rows", "4096", "--placements", "host", "--combination",
             "storage=host-compact,transfer=h2d", "--gpu-counts", "1", "--warmup", "0", "--repeat", "2",
             "--torch-threads", "1", "--no-ceilings", "--no-plots", "--out-json", str(out)]
    assert main(flags) == 0
    doc = json.loads(out.read_text())
    by_name = {r["placement"]: r for r in doc["results"]}
    assert set(by_name) == {"host", "host-compact"}  # the configuration resolves to its registered name
    compact = by_name["host-compact"]
    assert compact["layout"] == "compact" and compact["stored_row_bytes"] < compact["batch_row_bytes"]
    assert compact["batch_bytes_per_iteration"] == 32768 * compact["batch_row_bytes"]
    assert compact["host_peak_rss_bytes"] >= compact["host_rss_bytes"] > 0 and compact["device_peak_bytes"] == 0
    assert {r["layout"] for r in doc["layouts"]} >= {"fp32", "bf16", "compact"}
    assert "## Layouts" in (tmp_path / "analysis.md").read_text()


@pytest.mark.parametrize("flags, message", [
    (["--combination", "storage=host-pinned-compact,transfer=uva"], "elides next_obs"),
    (["--combination", "storage=tape-fp32"], "unknown storage 'tape-fp32'"),
    (["--out-json", "/proc/rlperf/results.json"], "cannot write there"),
])
def test_bad_combinations_and_unwritable_outputs_exit_2_before_measuring(tmp_path, capsys, flags, message):
    argv = ["replay", "--placements", "host", "--capacity-rows", "4096", "--out-json", str(tmp_path / "r.json"),
            *flags]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def _doc_with(results):
    return {"args": {"task": "g1_motion_tracking", "sim": "motrix"}, "device_info": "test",
            "workload": {"capacity_rows": 1024, "sample_rows_per_rank": 32768}, "results": results}


def _result(name, metric, ms, floor, layout="fp32", row=3720):
    return {"placement": name, "world_size": 1, "capacity_rows": 1024, "layout": layout, "stored_row_bytes": row,
            "batch_bytes_per_iteration": 32768 * row,
            "timings": {metric: {"median_ms": ms, "mean_ms": ms, "floor_ms": floor}}}


def test_the_per_placement_chart_sorts_batches_to_the_gpu_and_marks_floors(tmp_path):
    from rlperf.report.replay_placement_chart import batch_to_gpu_rows, placement_chart

    doc = _doc_with([_result("host", "cpu_sample_then_h2d_wall", 4.9, 2.2),
                     _result("gpu-bf16", "gpu_sample_wall", 0.05, 0.03, "bf16-slim", 1872),
                     _result("uva", "cpu_sample_then_h2d_wall", 2.4, None, "fp32-padded", 3728)])
    capacity_rows, rows = batch_to_gpu_rows(doc)
    assert capacity_rows == 1024 and [r["placement"] for r in rows] == ["gpu-bf16", "uva", "host"]
    assert rows[0]["batch_bytes"] == 32768 * 1872 and rows[1]["floor_ms"] is None
    assert placement_chart(doc, tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    assert placement_chart(_doc_with([]), tmp_path / "none.png") is None


def test_the_reference_chart_keeps_its_four_quantities_whatever_else_was_measured(tmp_path, monkeypatch):
    from rlperf.report import replay_charts

    host = _result("host", "cpu_sample_wall", 1.0, None)
    host["timings"].update({m: {"mean_ms": 1.0, "median_ms": 1.0} for m in ("cpu_sample_h2d_wall",
                                                                           "cpu_sample_then_h2d_wall")})
    doc = _doc_with([host]
                    + [_result(n, "gpu_sample_wall", 0.1, None) for n in ("gpu", "gpu-bf16", "gpu-fused")]
                    + [_result("uva", "cpu_sample_then_h2d_wall", 2.0, None)])
    labels = []
    monkeypatch.setattr(replay_charts, "_save", lambda fig, path: labels.extend(t.get_text() for t in
                                                                               fig.legends[0].get_texts()))
    replay_charts.component_breakdown(doc, tmp_path / "c.png")
    assert labels == ["CPU sample", "H2D", "CPU sample+H2D", "GPU sample"]


def _bars(monkeypatch, chart, doc, tmp_path):
    """Heights, y scale and tick labels of the bars `chart` draws for `doc` (first panel)."""
    from rlperf.report import replay_charts

    seen = {}

    def grab(fig, path):
        ax = fig.axes[0]
        seen.update(heights=sorted(round(p.get_height(), 6) for p in ax.patches), yscale=ax.get_yscale(),
                    ticks=[t.get_text() for t in ax.get_xticklabels()], ylabel=ax.get_ylabel())
        return path

    monkeypatch.setattr(replay_charts, "_save", grab)
    chart(doc, tmp_path / "c.png")
    return seen


def test_replay_charts_plot_medians_on_a_log_axis_with_capacities_in_rows(monkeypatch, tmp_path):
    from rlperf.report import replay_charts

    host = _result("host", "cpu_sample_then_h2d_wall", 5.0, None)
    gpu = _result("gpu", "gpu_sample_wall", 0.05, None)
    for r in (host, gpu):
        for t in r["timings"].values():
            t["mean_ms"] = 3 * t["median_ms"]  # a mean pulled up by slow samples must not be what is drawn
    doc = _doc_with([host, gpu])
    doc["workload"]["capacity_rows"] = 512
    for chart in (replay_charts.component_breakdown, replay_charts.gpu_sample_chart):
        seen = _bars(monkeypatch, chart, doc, tmp_path)
        assert 0.05 in seen["heights"] and 0.15 not in seen["heights"]
        assert seen["yscale"] == "log" and seen["ylabel"].startswith("Median")
        assert seen["ticks"] == ["1,024 rows\n(2^10, 2x config)"]


# ---- bad input gets exit 2 before anything is measured, and results are never lost (issue 24 s6) ----

def _no_measuring(monkeypatch):
    from rlperf.commands import replay as cmd

    monkeypatch.setattr(cmd, "measure", lambda *a, **k: pytest.fail("measured despite bad input"))


@pytest.mark.parametrize("flags, message", [
    (["--capacity-exponents", "20,11"], "the minimum is 2,049 rows (exponent 12)"),
    (["--capacity-rows", "8192,2048"], "capacity 2,048 rows cannot be sampled"),
    (["--placements", ","], "--placements: empty list; valid: host, host-pageable"),
])
def test_an_unsampleable_capacity_or_empty_placements_exit_2_before_measuring(tmp_path, capsys, monkeypatch,
                                                                                 flags, message):
    _no_measuring(monkeypatch)
    out = tmp_path / "r" / "results.json"
    assert main(["replay", "--gpu-counts", "1", *flags, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.parent.exists()


def test_an_existing_folder_as_out_json_exits_2_before_measuring(tmp_path, capsys, monkeypatch):
    _no_measuring(monkeypatch)
    folder = tmp_path / "results"
    folder.mkdir()
    assert main(["replay", "--capacity-rows", "4096", "--out-json", str(folder)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert list(folder.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["results"]


@pytest.fixture
def fake_measure(run_dir, monkeypatch):
    """`rlperf replay` with its measuring replaced by the saved document (tagged by a seed), so the writers
    can be exercised in milliseconds."""
    from rlperf.commands import replay as cmd

    saved = json.loads((run_dir / "results.json").read_text())

    def measure(cases, args, gpu_counts):
        doc = json.loads(json.dumps(saved))
        doc["args"]["seed"], doc["command"] = args.seed, f"rlperf replay --seed {args.seed}"
        return doc

    monkeypatch.setattr(cmd, "measure", measure)
    return lambda out, seed=1, *extra: main([*SMALL, "--seed", str(seed), "--out-json", str(out), *extra])


def test_ctrl_c_while_writing_charts_leaves_the_previous_report_whole(fake_measure, tmp_path, monkeypatch):
    from rlperf.report import replay_charts

    out = tmp_path / "results.json"
    assert fake_measure(out, 1) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def interrupted(doc, plot_dir):
        replay_charts.component_breakdown(doc, plot_dir / "sac_replay_sampling_component_breakdown.png")
        raise KeyboardInterrupt

    monkeypatch.setattr(replay_charts, "write_charts", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fake_measure(out, 2)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no new analysis, PNG or temp


def test_two_runs_to_one_path_never_mix_their_report_and_json(fake_measure, tmp_path, monkeypatch):
    import threading

    from rlperf.report import replay_charts

    real, gate, first_in_charts = replay_charts.write_charts, threading.Event(), threading.Event()

    def slow_for_run_1(doc, plot_dir):
        if doc["args"]["seed"] == 1:
            first_in_charts.set()
            gate.wait(30)
        return real(doc, plot_dir)

    monkeypatch.setattr(replay_charts, "write_charts", slow_for_run_1)
    out = tmp_path / "results.json"
    first = threading.Thread(target=fake_measure, args=(out, 1))
    first.start()
    assert first_in_charts.wait(30)
    assert fake_measure(out, 2) == 0  # the second run finishes while the first is still drawing
    gate.set()
    first.join(30)
    doc = json.loads(out.read_text())
    assert doc["args"]["seed"] == 1  # the last to publish wins, whole
    assert "`rlperf replay --seed 1`" in (tmp_path / "analysis.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_honour_the_umask(fake_measure, tmp_path, umask, mode):
    import os

    old = os.umask(umask)
    try:
        assert fake_measure(tmp_path / "results.json") == 0
    finally:
        os.umask(old)
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert len(files) >= 3 and {oct(p.stat().st_mode & 0o777) for p in files} == {oct(mode)}


def test_plot_only_writes_under_out_by_default_and_never_over_a_tracked_report(run_dir, tmp_path, monkeypatch,
                                                                                  capsys):
    import shutil
    import subprocess

    monkeypatch.chdir(tmp_path)
    assert main(["replay", "--plot-only", str(run_dir / "results.json")]) == 0
    assert (tmp_path / "out/replay/plot-only/analysis.md").is_file()
    committed = tmp_path / "results"
    committed.mkdir()
    shutil.copy(run_dir / "analysis.md", committed / "analysis.md")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    for cmd in (["init", "-q"], ["add", "results"], ["commit", "-qm", "report"]):
        subprocess.run([*git, *cmd], check=True)
    before = (committed / "analysis.md").read_bytes()
    argv = ["replay", "--plot-only", str(run_dir / "results.json"), "--plot-dir", str(committed)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "tracked by git" in err and "--overwrite-tracked" in err
    assert (committed / "analysis.md").read_bytes() == before and len(list(committed.iterdir())) == 1
    assert main([*argv, "--overwrite-tracked"]) == 0
    assert (committed / "sac_replay_sampling_component_breakdown.png").is_file()


@pytest.mark.parametrize("mangle", [
    lambda doc: doc["results"][0].pop("timings"),
    lambda doc: doc["results"].__setitem__(0, "not a row"),
    lambda doc: doc["workload"].pop("capacity_rows"),
])
def test_plot_only_on_malformed_rows_exits_2_and_writes_nothing(run_dir, tmp_path, capsys, mangle):
    doc = json.loads((run_dir / "results.json").read_text())
    mangle(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["replay", "--plot-only", str(bad), "--plot-dir", str(tmp_path / "plots")]) == 2
    assert f"{bad}: malformed rows" in capsys.readouterr().err
    assert not any((tmp_path / "plots").iterdir())


def test_a_second_run_waits_for_the_folder_lock_before_publishing(tmp_path):
    import fcntl
    import os
    import threading

    from rlperf.atomic import Staging, write_text

    stage = Staging()
    write_text(stage.path(tmp_path / "analysis.md"), "mine\n")
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another run is publishing into this folder
    publisher = threading.Thread(target=stage.publish)
    publisher.start()
    publisher.join(0.3)
    assert publisher.is_alive() and not (tmp_path / "analysis.md").exists()
    os.close(fd)
    publisher.join(10)
    assert (tmp_path / "analysis.md").read_text() == "mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["analysis.md"]  # the staging folder is gone


def test_replace_dir_swaps_a_whole_folder(tmp_path):
    from rlperf.atomic import replace_dir

    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "old.md").write_text("old")
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "analysis.md").write_text("new")
    replace_dir(tmp_path / "new", tmp_path / "report")
    assert [p.name for p in (tmp_path / "report").iterdir()] == ["analysis.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_plot_only_companions_are_refused_on_a_measuring_run(tmp_path, capsys, monkeypatch):
    _no_measuring(monkeypatch)
    assert main([*SMALL, "--overwrite-tracked", "--out-json", str(tmp_path / "r.json")]) == 2
    assert "--overwrite-tracked only applies with --plot-only PATH" in capsys.readouterr().err
