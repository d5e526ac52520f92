"""`rlperf noise` end to end with tiny env counts: JSON + chart, skips, --plot-only, --json, bad input."""

import json

import pytest

from rlperf.cli import main

TINY = ["--num-envs", "64,256", "--threads", "1,2,512", "--iters", "2", "--warmup", "1"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("noise") / "mt" / "results.json"
    return out, main(["noise", *TINY, "--out-json", str(out)])


def test_a_run_writes_json_and_chart_with_every_variant_and_both_distributions(run):
    out, rc = run
    assert rc == 0
    assert out.is_file() and (out.parent / "noise_g1_motion_tracking.png").is_file()
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["schema_version"]) == ("rlperf.noise", 1)
    seen = {(r["variant"], r["dist"]) for r in doc["results"]}
    assert seen == {(v, d) for v in ("numpy", "numpy-alloc", "numpy-threads", "counter-numba")
                    for d in ("uniform", "normal")}
    r = doc["results"][0]
    assert r["samples_ms"] and r["median_ms"] > 0 and r["values"] == r["num_envs"] * 64
    assert all(r["speedup_vs_numpy"] == 1.0 for r in doc["results"] if r["variant"] == "numpy")
    assert doc["counter_thread_independent"]["by_dist"] == {"uniform": True, "normal": True}


def test_single_threaded_variants_and_threads_above_the_machine_are_skipped_with_reasons(run):
    doc = json.loads(run[0].read_text())
    reasons = {s["reason"] for s in doc["skipped"]}
    assert any("single-threaded" in r for r in reasons) and any("512 threads requested" in r for r in reasons)
    assert not any(r["threads"] == 512 for r in doc["results"])


def test_plot_only_rerenders_the_chart_and_json_prints_a_summary(run, capsys):
    out, _ = run
    chart = out.parent / "noise_g1_motion_tracking.png"
    chart.unlink()
    assert main(["noise", "--plot-only", str(out), "--plot-dir", str(out.parent), "--json"]) == 0
    assert chart.is_file()
    summary = json.loads(capsys.readouterr().out)
    assert summary["schema"] == "rlperf.noise.summary" and summary["ok"]


@pytest.mark.parametrize("argv, message", [
    (["--variants", "numpy,bogus"], "numpy-threads"),
    (["--dists", "cauchy"], "uniform"),
    (["--task", "g1_run"], "g1_walk_flat"),
    (["--num-envs", "0"], "--num-envs"),
    (["--iters", "0"], "--iters"),
    (["--num-envs", str(10**12)], "--num-envs: host memory: 1,000,000,000,000 envs x 64 noise columns"),
    (["--variants", ","], "--variants: empty list; valid: numpy"),
])
def test_bad_input_exits_2_naming_the_valid_choices_and_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "r.json"
    assert main(["noise", *argv, "--out-json", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_an_output_path_that_is_a_directory_and_a_foreign_json_exit_2(tmp_path, capsys):
    assert main(["noise", "--out-json", str(tmp_path)]) == 2
    foreign = tmp_path / "x.json"
    foreign.write_text('{"schema": "rlperf.env", "schema_version": 1}')
    assert main(["noise", "--plot-only", str(foreign)]) == 2
    assert "rlperf.noise" in capsys.readouterr().err


def test_plot_only_on_malformed_rows_exits_2_and_never_writes_next_to_its_input(run, tmp_path, capsys, monkeypatch):
    doc = json.loads(run[0].read_text())
    del doc["results"][0]["median_ms"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    assert main(["noise", "--plot-only", str(bad)]) == 2
    assert f"{bad}: malformed rows" in capsys.readouterr().err
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["bad.json"]
