"""rlperf.e2e.progress and the run outline: a step is announced before it runs, a long point says how far
it is at most every TICK_SECONDS, the outline names where the learner runs, the kernel compile is announced once."""

from __future__ import annotations

import logging

from rlperf.e2e import progress
from rlperf.e2e.collector.kernels import first_use
from rlperf.e2e.loop.outline import where_lines
from rlperf.e2e.loop.session import E2EPlan


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rlperf.e2e"]


def test_a_stage_is_announced_before_its_body_runs_then_timed(caplog):
    caplog.set_level(logging.INFO, logger="rlperf.e2e")
    with progress.stage("compiling", "about a minute"):
        progress.note("inside")
    first, inside, last = _messages(caplog)
    assert (first, inside) == ("compiling (about a minute) ...", "inside")
    assert last.startswith("compiling: done in ") and last.endswith(" s")


def test_the_ticker_speaks_at_most_every_tick_and_not_at_the_end(caplog):
    caplog.set_level(logging.INFO, logger="rlperf.e2e")
    now = [0.0]
    ticker = progress.Ticker("point 1/1", 4, clock=lambda: now[0])
    for t in (1.0, progress.TICK_SECONDS + 0.5, progress.TICK_SECONDS + 1.0, 3 * progress.TICK_SECONDS):
        now[0] = t
        ticker.update()
    assert _messages(caplog) == ["point 1/1: 2/4 iterations, 6 s"]  # the 4th is the stage's "done" line


def test_to_stderr_prints_with_elapsed_seconds_and_detaches(capsys):
    with progress.to_stderr():
        progress.note("hello")
    progress.note("after")  # no handler any more: silent
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].endswith("e2e: hello") and err[0].startswith("[")


def _plan(**kw) -> E2EPlan:
    base = dict(task="g1_motion_tracking", sim="mujoco", placements=("host", "gpu"), prefetch=("one_tick",),
                schedules=("async",), num_envs=(16,), iterations=2, warmup=1, physics="recorded", threads=2,
                overrides=("algo.use_cuda_graphs=true",))
    return E2EPlan(**{**base, **kw})


def test_the_outline_names_the_gpu_where_there_is_one():
    import torch

    lines = where_lines(_plan(), torch.device("cuda", 0), "NVIDIA H200")
    assert lines[0] == "the SAC learner runs on cuda:0 (NVIDIA H200): torch.compile + CUDA graphs"
    assert lines[1].startswith("the collector runs on the CPU (2 threads): states replayed")
    assert lines[2] == "placements measured: host, gpu"
    assert lines[3].startswith("2 point(s) (1 env count(s) x 2 placement(s) x schedule async x prefetch one_tick), "
                               "each 2 warmup + 4 measured iterations")


def test_the_outline_without_cuda_says_what_is_skipped():
    lines = where_lines(_plan(overrides=("algo.use_compile=false",)), None)
    assert lines[0] == ("no CUDA device: the SAC learner (eager) runs on the CPU, and every placement that "
                        "needs CUDA is skipped")
    assert lines[2] == "placements measured: host; skipped: gpu (needs CUDA)"
    assert lines[3].startswith("1 point(s)")


def test_the_fused_kernel_compile_is_announced_once_per_task():
    assert not first_use("test-task", "numpy")
    assert first_use("test-task", "fused")
    assert not first_use("test-task", "fused")
