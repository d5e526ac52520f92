"""Batch sources for the learner: the replay with prefetch `none` or `one_tick`, or a resident batch.

`one_tick`: when the learner takes batch t, the sample for batch t+1 is submitted to a side thread
(the placement gathers on its own CUDA stream there), so it runs while the t-th updates run
(docs/limits.md 2.6). Snapshot rule modelled: batch t+1's indices are drawn when its prefetch
starts, i.e. before the collector's next sync chunk is written, one chunk staler than the reference's
`min_snapshot_ptr = ptr + num_envs * env_steps_per_sync`. Slot reuse is safe because the loop
synchronises the learner device at the end of every iteration, before the next take hands the
slot of batch t to the prefetch of batch t+2.

`resident`: one batch gathered once and kept on the learner device; the same iteration with it
measures what the iteration costs without any replay work (exposed replay time, method b).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

PREFETCH_MODES = ("none", "one_tick")


class ReplayBatches:
    """`take()` -> the next batch; the loop times the take as the learner's wait for its batch."""

    def __init__(self, port, mode: str):
        if mode not in PREFETCH_MODES:
            from rlperf.errors import choice_error

            raise choice_error("prefetch mode", mode, PREFETCH_MODES)
        self.port, self.mode = port, mode
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future | None = None

    def start(self) -> None:
        """Prime the pipeline: in steady state one prefetch is always in flight."""
        if self.mode == "one_tick":
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replay-prefetch")
            self._pending = self._pool.submit(self.port.sample)

    def take(self):
        if self.mode == "none":
            return self.port.sample()
        batch = self._pending.result()
        self._pending = self._pool.submit(self.port.sample)
        return batch

    def stop(self) -> None:
        """Drain the prefetch in flight (untimed) and end the side thread."""
        if self._pending is not None:
            self._pending.result()
            self._pending = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class ResidentBatches:
    """The same batch every time, already on the learner device: replay costs nothing here."""

    mode = "resident"

    def __init__(self, port):
        self.batch = None
        self.port = port

    def start(self) -> None:
        if self.batch is None:
            self.batch = self.port.resident_batch()

    def take(self):
        return self.batch

    def stop(self) -> None:
        pass
