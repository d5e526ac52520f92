"""What a long e2e run is doing right now, as INFO records on the `rlperf.e2e` logger.

Why a logger: the slow steps (the MuJoCo model load, the recording run, the Numba compile, torch.compile
in the warmup) happen deep inside the collector and the loop, which asv and the tests also drive. A logger
lets each say what it is about to do without a reporter threaded through every constructor; nothing is
printed unless someone attaches a handler (`rlperf e2e` attaches `to_stderr`), so asv and the tests stay quiet.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time

LOGGER = logging.getLogger("rlperf.e2e")
TICK_SECONDS = 5.0  # an iteration count at most this often inside a point: no silent stretch longer


def note(message: str) -> None:
    """One progress line."""
    LOGGER.info(message)


@contextlib.contextmanager
def stage(what: str, hint: str = ""):
    """Announce `what` (with `hint`, e.g. how long it usually takes) before it starts, so a slow step is
    never a silent gap; then its duration."""
    note(f"{what}{f' ({hint})' if hint else ''} ...")
    t0 = time.perf_counter()
    yield
    note(f"{what}: done in {time.perf_counter() - t0:.1f} s")


class Ticker:
    """Counts iterations of one point; says how far it is at most every TICK_SECONDS."""

    def __init__(self, label: str, total: int, clock=time.perf_counter):
        self.label, self.total, self.done, self._clock = label, total, 0, clock
        self._start = self._last = clock()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = self._clock()
        if now - self._last >= TICK_SECONDS and self.done < self.total:
            self._last = now
            note(f"{self.label}: {self.done}/{self.total} iterations, {now - self._start:.0f} s")


class _Elapsed(logging.Formatter):
    def __init__(self):
        super().__init__()
        self._start = time.perf_counter()

    def format(self, record: logging.LogRecord) -> str:
        return f"[{time.perf_counter() - self._start:6.1f} s] e2e: {record.getMessage()}"


@contextlib.contextmanager
def to_stderr():
    """Print the run's progress on stderr (flushed per line, seconds since the start) while inside."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Elapsed())
    level = LOGGER.level
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    try:
        yield
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)
