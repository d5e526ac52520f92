"""One iteration of each schedule, and the record it leaves (docs/e2e.md defines every term).

synchronous: the collector steps `env_steps_per_sync` times, then the learner takes its batch, runs
  `updates_per_step` updates and hands the actor weights to the collector. They alternate, so each
  waits for the other for the whole of the other's phase.
async: the collector steps in its own thread, at most MAX_LEAD sync chunks ahead of the learner; one
  iteration is one learner iteration: wait for a new chunk, take the batch, the updates, post the
  weights (the collector loads them before its next chunk).
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field

from rlperf.e2e.loop.clock import Span, marked, sync, wall_ms

MAX_LEAD = 1  # sync chunks the async collector may run ahead of the learner
COLLECTOR_PHASES = ("physics", "state_read", "noise", "inputs", "update_state", "policy", "replay_add", "reset_done",
                    "other", "total")


@dataclass(frozen=True)
class IterationSample:
    """One iteration's times in ms (raw; the report summarises them)."""

    iteration_ms: float
    learner_ms: float  # learner phase: batch wait + updates + weight hand-off, device synchronised
    batch_wait_ms: float  # exposed replay time (a): the learner's wait for its batch (CUDA events / wall)
    update_ms: float  # the SAC updates of this iteration (CUDA events / wall)
    weight_sync_ms: float  # the collector's load of the new actor weights
    collector_ms: float  # the collector steps whose chunk this iteration consumed
    learner_wait_ms: float  # the learner waiting for new collector data
    collector_wait_ms: float  # the collector waiting for the learner
    collector_phases: dict[str, float] = field(default_factory=dict)  # summed over the chunk's steps


def _sum_steps(collector, steps: int, device) -> tuple[dict[str, float], float]:
    t0 = time.perf_counter()
    total: dict[str, float] = {}
    with marked("collector_step", device):
        for _ in range(steps):
            for name, ms in collector.step().items():
                total[name] = total.get(name, 0.0) + float(ms)
    return total, wall_ms(t0)


def _learner_phase(learner, source, device) -> tuple[float, float]:
    wait, update = Span(device), Span(device)
    with marked("replay_batch_wait", device):
        wait.start()
        batch = source.take()
        wait.stop()
    with marked("sac_updates", device):
        update.start()
        learner.iteration(batch)
        update.stop()
    sync(device)
    return wait.ms(), update.ms()


def sync_iteration(collector, learner, source, *, device, env_steps_per_sync: int) -> IterationSample:
    t0 = time.perf_counter()
    phases, collector_ms = _sum_steps(collector, env_steps_per_sync, device)
    l0 = time.perf_counter()
    wait_ms, update_ms = _learner_phase(learner, source, device)
    with marked("weight_sync", device):
        weight_ms = float(collector.set_policy_weights(learner.actor.state_dict()))
    learner_ms = wall_ms(l0)
    return IterationSample(wall_ms(t0), learner_ms, wait_ms, update_ms, weight_ms, collector_ms,
                           learner_wait_ms=collector_ms, collector_wait_ms=learner_ms, collector_phases=phases)


@dataclass(frozen=True)
class _Chunk:
    phases: dict[str, float]
    collector_ms: float
    wait_ms: float  # the collector's wait for the learner before this chunk
    weight_ms: float  # the weight load before this chunk (0 when none was pending)


class AsyncCollector:
    """The collector in its own thread, producing sync chunks; the learner consumes them one per iteration."""

    def __init__(self, collector, *, device, env_steps_per_sync: int):
        self.collector, self.device, self.steps = collector, device, env_steps_per_sync
        self._cond = threading.Condition()
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._weights = None
        self._stop = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="e2e-collector", daemon=True)

    def start(self) -> "AsyncCollector":
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while True:
                t0 = time.perf_counter()
                with self._cond:
                    self._cond.wait_for(lambda: self._stop or len(self._chunks) < MAX_LEAD)
                    if self._stop:
                        return
                    weights, self._weights = self._weights, None
                wait_ms = wall_ms(t0)
                weight_ms = float(self.collector.set_policy_weights(weights)) if weights is not None else 0.0
                phases, collector_ms = _sum_steps(self.collector, self.steps, self.device)
                with self._cond:
                    self._chunks.append(_Chunk(phases, collector_ms, wait_ms, weight_ms))
                    self._cond.notify_all()
        except BaseException as exc:  # surfaced in the learner thread, never swallowed
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    def next_chunk(self) -> _Chunk:
        with self._cond:
            self._cond.wait_for(lambda: self._chunks or self._error is not None)
            if self._error is not None:
                raise RuntimeError(f"collector thread failed: {self._error!r}") from self._error
            chunk = self._chunks.popleft()
            self._cond.notify_all()
            return chunk

    def post_weights(self, state_dict) -> None:
        with self._cond:
            self._weights = state_dict

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join()
        if self._error is not None:
            raise RuntimeError(f"collector thread failed: {self._error!r}") from self._error


def async_iteration(runner: AsyncCollector, learner, source, *, device) -> IterationSample:
    t0 = time.perf_counter()
    with marked("wait_for_collector", device):
        chunk = runner.next_chunk()
    learner_wait_ms = wall_ms(t0)
    l0 = time.perf_counter()
    wait_ms, update_ms = _learner_phase(learner, source, device)
    with marked("weight_post", device):  # a snapshot: the next updates must not change what the collector loads
        runner.post_weights({k: v.detach().clone() for k, v in learner.actor.state_dict().items()})
        sync(device)
    learner_ms = wall_ms(l0)
    return IterationSample(wall_ms(t0), learner_ms, wait_ms, update_ms, chunk.weight_ms, chunk.collector_ms,
                           learner_wait_ms=learner_wait_ms, collector_wait_ms=chunk.wait_ms,
                           collector_phases=chunk.phases)
