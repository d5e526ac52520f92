"""`rlperf e2e`: bad input exits 2 before anything runs or is written; a tiny CPU run (fake collector)
writes a versioned JSON with raw samples, skips GPU placements with reasons, report.md, charts, a trace."""

from __future__ import annotations

import json

import pytest

from rlperf.cli import main
from rlperf.e2e.loop import collectors
from tests.e2e.test_loop_fake import TINY


@pytest.mark.parametrize("flags, message", [
    (["--placements", "host,nope"], "unknown placement 'nope'; valid: host, host-pageable"),
    (["--prefetch", "two_tick"], "unknown prefetch mode 'two_tick'; valid: none, one_tick"),
    (["--schedule", "sometimes"], "unknown schedule 'sometimes'; valid: synchronous, async"),
    (["--physics", "motrix"], "unknown physics 'motrix'; valid: mujoco, recorded"),
    (["--kernels", "cuda"], "unknown kernel 'cuda'; valid: fused, numpy"),
    (["--num-envs", "0"], "--num-envs: '0' is not a positive integer"),
    (["--iterations", "0"], "--iterations: 0 must be >= 1"),
    (["--task", "g1_run"], "unknown task 'g1_run'"),
    (["--placements", ","], "--placements: empty list; valid: host"),
    (["algo.no_such_key=1"], "bad Hydra override"),
    (["algo.amp_dtype=float16"], "amp_dtype 'float16' is not supported; valid: auto, bfloat16"),
    (["--num-envs", str(10**12)], "--num-envs: host memory: 1,000,000,000,000 envs: one collector sync"),
    (["=5"], "Hydra override '=5' names no key; write KEY=VALUE, e.g. algo.num_envs=4096"),
    (["~algo.num_envs"], "left the config without a key the workload needs"),
    (["algo.num_envs=1.5"], "algo.num_envs must be an integer, got 1.5"),
    (["algo.num_envs=true"], "algo.num_envs must be an integer, got True"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, fake_collector, flags, message):
    out = tmp_path / "r" / "results.json"
    assert main(["e2e", "--out-json", str(out), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.parent.exists()


def test_output_paths_are_checked_before_measuring(tmp_path, capsys, fake_collector):
    assert main(["e2e", "--out-json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["e2e", "--out-json", str(tmp_path / "x.json"), "--profile", str(blocker / "t.json")]) == 2
    assert "--profile: cannot create" in capsys.readouterr().err


def test_a_missing_collector_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(collectors, "COLLECTOR_MODULE", "rlperf.e2e.no_such_collector")
    assert main(["e2e", "--out-json", str(tmp_path / "r.json"), *TINY]) == 2
    assert "rlperf.e2e.no_such_collector is not installed" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow
def test_tiny_cpu_run_end_to_end(tmp_path, fake_collector, capsys):
    import os

    out = tmp_path / "e2e" / "results.json"
    trace = tmp_path / "trace" / "one_iteration.json"
    umask = os.umask(0o022)
    try:
        code = main(["e2e", "--placements", "host,gpu-fused", "--schedule", "synchronous,async", "--iterations", "2",
                     "--prefetch", "one_tick", "--warmup-iterations", "0", "--ab-steps", "2", "--threads", "1",
                     "--physics", "recorded", "--out-json", str(out), "--profile", str(trace), *TINY])
    finally:
        os.umask(umask)
    assert code == 0, capsys.readouterr().err
    outputs = [trace, *(p for p in out.parent.iterdir() if p.is_file())]
    assert len(outputs) >= 5 and {oct(p.stat().st_mode & 0o777) for p in outputs} == {"0o644"}  # not mkstemp's 0600
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["schema_version"]) == ("rlperf.e2e", 1)
    assert doc["machine"]["num_cpu"] >= 1 and doc["device_info"].startswith("CPU:")
    assert len(doc["points"]) == 2  # host x {synchronous, async} x one_tick
    for p in doc["points"]:
        assert len(p["samples"]["replay"]) == len(p["samples"]["resident"]) == 2
        assert p["summary"]["env_steps_per_s"] > 0 and p["physics"] == "recorded"
    [skip] = doc["skipped"]
    assert skip["placement"] == "gpu-fused" and "needs a CUDA device" in skip["reason"]
    assert [e["kernel"] for e in doc["collector_ab"]] == ["fused", "numpy"]
    assert doc["speedups"]["collector_kernel"][0]["collector_step_speedup"] > 0
    assert [s["host"] for s in doc["speedups"]["placement"]] == ["host/one_tick"] * 2
    assert doc["learner_note"] == "off (use_symmetry false)"
    names = sorted(p.rsplit("/", 1)[-1] for p in doc["plots"])
    assert names == ["e2e_collector_step.png", "e2e_iteration_async.png", "e2e_iteration_synchronous.png"]
    report = (out.parent / "report.md").read_text()
    assert "exposed (a) ms" in report and "| 16 | async | host | one_tick |" in " ".join(report.split())
    assert any(e.get("name") == "sac_updates" for e in json.loads(trace.read_text())["traceEvents"])
    (out.parent / "report.md").unlink()
    assert main(["e2e", "--plot-only", str(out), "--plot-dir", str(out.parent), "--no-plots"]) == 0
    assert (out.parent / "report.md").read_text() == report


def test_plot_only_rejects_a_foreign_document(tmp_path, capsys):
    foreign = tmp_path / "r.json"
    foreign.write_text(json.dumps({"schema": "rlperf.replay", "schema_version": 1}))
    assert main(["e2e", "--plot-only", str(foreign)]) == 2
    assert "not an rlperf 'rlperf.e2e' result" in capsys.readouterr().err


def test_progress_says_what_runs_where_before_anything_is_measured(tmp_path, capsys, fake_collector, monkeypatch):
    import sys

    from rlperf.e2e.loop import session

    def measuring(*args, **kwargs):
        print("MEASURING", file=sys.stderr)
        return original(*args, **kwargs)

    original = session.measure_point
    monkeypatch.setattr(session, "measure_point", measuring)
    monkeypatch.setattr(session, "learner_device", lambda: None)  # the CPU-only path, on any box
    out = tmp_path / "r" / "results.json"
    assert main(["e2e", "--placements", "host,gpu-fused", "--schedule", "synchronous", "--prefetch", "none",
                 "--iterations", "1", "--warmup-iterations", "0", "--ab-steps", "0", "--threads", "1",
                 "--physics", "recorded", "--no-plots", "--out-json", str(out), *TINY]) == 0
    lines = capsys.readouterr().err.splitlines()
    measured = lines.index("MEASURING")
    assert "e2e: checking the inputs" in lines[0]
    [where] = [i for i, line in enumerate(lines) if "no CUDA device" in line]
    assert where < measured
    assert "the SAC learner (eager) runs on the CPU" in lines[where]
    assert "every placement that needs CUDA is skipped" in lines[where]
    assert any("the collector runs on the CPU (1 threads)" in line for line in lines[:measured])
    assert any("placements measured: host; skipped: gpu-fused (needs CUDA)" in line for line in lines[:measured])
    before = "\n".join(lines[:measured])
    for step in ("building the SAC learner", "building the collector", "host: allocating",
                 "point 1/1 (16 envs, host, synchronous, prefetch none): 2 iterations ..."):
        assert step in before
    assert "point 1/1 (16 envs, host, synchronous, prefetch none): 2 iterations: done in" in "\n".join(lines[measured:])


def _plan(argv, monkeypatch, cuda: bool):
    import torch

    from rlperf.cli import build_parser
    from rlperf.commands.e2e import plan_from_args
    from rlperf.e2e.loop import session

    monkeypatch.setattr(session, "learner_device", lambda: torch.device("cuda", 0) if cuda else None)
    argv = ["e2e", "--out-json", "/nonexistent-dir-is-fine/r.json", *argv, *(o for o in TINY if not o.startswith("algo.use_compile"))]
    return plan_from_args(build_parser(argv).parse_args(argv))


@pytest.mark.parametrize("argv, cuda, graphs", [
    ([], True, True),  # the recommendation of docs/e2e-h200.md where CUDA is
    ([], False, False),  # the CPU has no CUDA graphs
    (["algo.use_compile=false"], True, False),  # graphs need torch.compile: auto leaves them off
    (["algo.use_cuda_graphs=false"], True, False),  # an explicit override is used as given
    (["--learner-graphs", "off"], True, False),
    (["--learner-graphs", "on"], True, True),
])
def test_learner_graphs_follow_the_recommendation_where_cuda_is(monkeypatch, argv, cuda, graphs):
    plan = _plan(argv, monkeypatch, cuda)
    assert plan.learner(16).use_cuda_graphs is graphs
    assert plan.schedules == ("async",)


@pytest.mark.parametrize("argv, cuda, message", [
    (["--learner-graphs", "on"], False, "--learner-graphs on needs a CUDA device"),
    (["--learner-graphs", "off", "algo.use_cuda_graphs=true"], True, "give one of them"),
])
def test_learner_graphs_refuse_what_cannot_hold(monkeypatch, argv, cuda, message):
    from rlperf.errors import UsageError

    with pytest.raises(UsageError, match=message):
        _plan(argv, monkeypatch, cuda)
