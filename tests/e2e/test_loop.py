"""The iteration on the CPU: every CPU-capable placement through its real write and sample paths,
prefetch none / one_tick, schedules synchronous / async, with a fake collector and a tiny learner."""

from __future__ import annotations

import pytest
import torch

from rlperf.e2e.learner.config import learner_config
from rlperf.e2e.learner.sac import SacLearner
from rlperf.e2e.loop.batches import ReplayPort, SwitchableWriter, replay_memory_verdict, single_gpu_placements
from rlperf.e2e.loop.matrix import measure_point
from rlperf.e2e.loop.prefetch import ReplayBatches
from rlperf.e2e.loop.schedules import run_block
from rlperf.report.e2e_report import iteration_parts, point_summary
from rlperf.errors import UsageError
from rlperf.replay.peers import PEER_SPECS
from rlperf.replay.placements import SPECS
from rlperf.workload import compose
from tests.e2e.test_loop_fake import FakeCollector

OVERRIDES = ["algo.num_envs=16", "algo.replay_buffer_n=8", "algo.batch_size=32", "algo.actor_hidden_dim=16",
             "algo.critic_hidden_dim=16", "algo.num_atoms=11", "algo.use_compile=false", "training.use_amp=false"]
CPU_PLACEMENTS = ("host", "host-pageable", "host-pipelined", "host-bf16", "host-compact", "host-numba")


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.fixture
def parts():
    wl = compose("g1_motion_tracking", "mujoco", OVERRIDES)
    learner = SacLearner(learner_config("g1_motion_tracking", "mujoco", OVERRIDES, workload=wl), seed=0)
    writer = SwitchableWriter()
    collector = FakeCollector(wl, replay_writer=writer, policy=learner.cpu_actor())
    return wl, learner, writer, collector


def _port(wl, placement="host", fill=True):
    """A set-up port, its empty storage filled through `storage.add` as the session's prefill does."""
    port = ReplayPort(placement, wl, capacity_rows=wl.capacity_rows, device=None, threads=1, seed=0)
    port.setup()
    if fill:
        FakeCollector(wl, seed=1).prefill(port.storage, wl.capacity_rows)
    return port


class Tee:
    """Writes each step to the placement's storage and to a packed fp32 reference storage."""

    def __init__(self, *targets):
        self.targets = targets

    def add(self, **fields):
        for t in self.targets:
            t.add(**fields)


@pytest.mark.parametrize("placement", CPU_PLACEMENTS)
def test_collector_writes_reach_what_the_placement_samples(parts, placement):
    from rlperf.replay.storage import ReplayStorage

    wl, _, writer, collector = parts
    port = _port(wl, placement, fill=False)  # only the collector writes
    ref = ReplayStorage(wl.layout, wl.capacity_rows, step_rows=wl.num_envs)
    collector.done_rate = 0.01  # inside the compact layout's terminal table (capacity // 32 live rows)
    writer.target = Tee(port.storage, ref)
    for _ in range(wl.replay_buffer_n + 1):  # wraps once
        collector.step()
    assert port.storage.ptr == (wl.replay_buffer_n + 1) * wl.num_envs
    batch = port.sample()
    want = ref.decode(ref.gather(port.last_indices(), ref.new_batch(wl.sample_rows_per_rank)))
    assert batch.obs.shape == (wl.sample_rows_per_rank, wl.obs_dim) and batch.obs.dtype == torch.float32
    exact = port.spec.layout_name.startswith("fp32")
    for name in ("obs", "next_obs", "actions", "rewards", "dones", "truncated", "critic", "next_critic"):
        tol = {"rtol": 0, "atol": 0} if exact else {"rtol": 2**-8, "atol": 1e-6}  # bf16: 8-bit mantissa
        torch.testing.assert_close(getattr(batch, name), getattr(want, name), **tol, msg=name)
    port.close()


def test_one_tick_keeps_batch_t_intact_while_t_plus_1_is_gathered(parts):
    wl, *_ = parts
    port = _port(wl)
    source = ReplayBatches(port, "one_tick")
    source.start()
    first = source.take()  # batch t; batch t+1 is now being gathered
    snapshot = first.obs.clone()
    source._pending.result()  # let the gather of t+1 finish while t is still "in use"
    assert torch.equal(first.obs, snapshot)
    second = source.take()
    assert second.obs.data_ptr() != first.obs.data_ptr()
    source.stop()
    port.close()


# The CLI test runs both schedules with one_tick, the error test async with none.
@pytest.mark.parametrize("schedule, prefetch", [("synchronous", "none"), ("async", "one_tick")])
def test_a_point_measures_replay_and_resident_iterations(parts, schedule, prefetch):
    wl, learner, writer, collector = parts
    port = _port(wl)
    writer.target = port.storage
    point = measure_point(port, collector, learner, schedule=schedule, prefetch=prefetch, iterations=3, warmup=0,
                          device=None, env_steps_per_sync=wl.env_steps_per_sync)
    port.close()
    rep, res = point["samples"]["replay"], point["samples"]["resident"]
    assert len(rep) == len(res) == 3
    assert collector.steps >= 6  # 3 replay-fed + 3 resident-fed iterations, one chunk each
    if schedule == "synchronous":
        assert collector.weight_loads == 6
    else:  # loaded before the next chunk; the last post of each block is never loaded
        assert collector.weight_loads >= 2
    for row in rep + res:
        assert row["iteration_ms"] >= row["learner_ms"] > 0 and row["update_ms"] > 0
        parts_ms = iteration_parts(row, schedule)
        assert sum(parts_ms.values()) == pytest.approx(row["iteration_ms"])
    summary = point_summary({**point, "num_envs": wl.num_envs, "env_steps_per_sync": 1, "updates_per_step": 4})
    assert summary["env_steps_per_s"] > 0 and summary["learner_updates_per_s"] > 0
    assert summary["exposed_replay_vs_resident_ms"] == pytest.approx(
        summary["learner_ms"] - summary["resident_learner_ms"])


def test_async_collector_errors_surface_in_the_learner(parts):
    wl, learner, writer, collector = parts
    port = _port(wl)
    writer.target = None  # every collector write now fails
    with pytest.raises(RuntimeError, match="collector thread failed"):
        run_block("async", collector, learner, ReplayBatches(port, "none"), iterations=2, device=None,
                  env_steps_per_sync=1)
    port.close()


def test_gpu_placements_are_skipped_with_a_reason_on_a_cpu_box():
    wl = compose("g1_motion_tracking", "mujoco")
    for name in single_gpu_placements():
        verdict = replay_memory_verdict(name, wl, wl.capacity_rows, cuda=False, host_available=2**40, device_free=0)
        assert verdict.ok == (not SPECS[name].needs_cuda), (name, verdict.reason)  # host-kind storage runs on a CPU
    assert set(CPU_PLACEMENTS) <= set(single_gpu_placements()) and not set(PEER_SPECS) & set(single_gpu_placements())
    small = replay_memory_verdict("host", wl, wl.capacity_rows, cuda=False, host_available=2**30, device_free=0)
    assert not small.ok and "needs" in small.reason and "available" in small.reason and " B)" in small.reason
    with pytest.raises(UsageError, match="valid: host"):
        ReplayPort("nope", wl, capacity_rows=8, device=None, threads=1, seed=0)


def test_host_numba_needs_the_host_bytes_of_host_on_a_gpu_host():
    """Both gather into a host staging batch: the e2e guard counts the second slot's staging for both."""
    wl = compose("g1_motion_tracking", "mujoco")
    reasons = {name: replay_memory_verdict(name, wl, wl.capacity_rows, cuda=True, host_available=1,
                                           device_free=2**50).reason for name in ("host", "host-numba")}
    assert "needs" in reasons["host"]
    assert reasons["host-numba"] == reasons["host"].replace("e2e host ", "e2e host-numba ")


@pytest.mark.gpu
@pytest.mark.parametrize("placement", [p for p in single_gpu_placements() if p not in CPU_PLACEMENTS])
def test_gpu_point_runs_every_single_gpu_placement(placement):
    wl = compose("g1_motion_tracking", "mujoco", OVERRIDES)
    device = torch.device("cuda", 0)
    free, _ = torch.cuda.mem_get_info(device)
    verdict = replay_memory_verdict(placement, wl, wl.capacity_rows, cuda=True, host_available=2**34, device_free=free)
    if not verdict.ok:
        pytest.skip(verdict.reason)  # e.g. cupy not installed for uva / gpu-fused
    learner = SacLearner(learner_config("g1_motion_tracking", "mujoco", OVERRIDES, workload=wl), device, seed=0)
    writer = SwitchableWriter()
    collector = FakeCollector(wl, replay_writer=writer, policy=learner.cpu_actor())
    port = ReplayPort(placement, wl, capacity_rows=wl.capacity_rows, device=device, threads=2, seed=0)
    port.setup()
    collector.prefill(port.storage, wl.capacity_rows)
    writer.target = port.storage
    point = measure_point(port, collector, learner, schedule="synchronous", prefetch="one_tick", iterations=2,
                          warmup=1, device=device, env_steps_per_sync=1)
    port.close()
    rows = point["samples"]["replay"]
    assert len(rows) == 2 and all(r["batch_wait_ms"] >= 0 and r["update_ms"] > 0 for r in rows)
    assert port.storage is None  # closed: the table is released


def test_a_plan_composes_its_workload_once_and_varies_only_the_env_count(monkeypatch):
    """Each env count is `with_envs(n)` of one composed workload, equal to composing algo.num_envs=n."""
    from rlperf.e2e.loop import session

    calls = []
    monkeypatch.setattr(session, "compose", lambda *a, **k: calls.append(a) or compose(*a, **k))
    session._workload.cache_clear()
    session._learner.cache_clear()
    plan = session.E2EPlan(task="g1_walk_flat", sim="mujoco", placements=(), prefetch=(), schedules=(),
                           num_envs=(16, 32), iterations=1, warmup=0, physics="mujoco", overrides=tuple(OVERRIDES[1:]))
    wl16, wl32 = plan.workload(16), plan.workload(32)
    assert len(calls) == 1
    assert wl32 == compose("g1_walk_flat", "mujoco", [*OVERRIDES[1:], "algo.num_envs=32"])
    assert (wl16.num_envs, plan.learner(32).learner_batch) == (16, wl32.learner_batch)
    session._workload.cache_clear()
    session._learner.cache_clear()
