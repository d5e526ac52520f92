"""Paired sampling: base and head held in two live processes and timed in turn, sample by sample.

Why: on a shared or virtualised box the speed of the machine drifts over seconds (neighbours in a
shared L3, host scheduling). asv passes of base and head are seconds apart, so each per-pass ratio
carries that drift: on the 2-vCPU box single-pass ratios had a CV of 24-40 %
(results/reports/gate/MEASUREMENTS.md). Two samples taken back to back see the same machine, so their
ratio cancels the drift. The sides strictly alternate (base, head, base, head, ...), so every sample follows one of
the other side: an ABBA order makes every first-of-pair sample a repeat of the same process, with warm
caches, and every second one a switch (docs/gate.md, Paired sampling). Each point gets its own
pair of fresh worker processes (gate.paired_worker).

A `track_` point that carries samples (asv's {"samples": [...]}, e.g. the replay suite's CUDA-event
timings) is paired the same way on the value each call returns (the median of its samples). A point
whose single call would not fit `warmup_pairs + block` pairs in the budget is left to the passes.

Per point the pairs are cut into consecutive blocks; each block gives (median base, median head),
which the judge treats like an interleaved pass: the median of per-block ratios against the factor.
"""

from __future__ import annotations

import json
import os
import selectors
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rlperf.errors import InfrastructureError
from rlperf.gate import paired_worker
from rlperf.gate.results import corrupt_value

WORKER_SOURCE = Path(paired_worker.__file__).read_text(encoding="utf-8")
SIDES = ("base", "head")


@dataclass(frozen=True)
class PairedSpec:
    """How long to sample each point and how the pairs are grouped."""

    seconds: float  # sampling time per point, both sides together
    block: int = 5  # pairs per block (one judged ratio)
    sample_time: float = 0.01  # each sample is at least this long (asv's default sample_time)
    warmup_pairs: int = 2  # discarded, per pair of workers
    restarts: int = 1  # successive fresh pairs of workers per point (a process pair's own bias averages out)
    timeout: float = 600.0  # a worker's setup (a cold Numba compile) may take this long


@dataclass
class PointPairs:
    """What one point's paired sampling gave: the raw pairs in time order, or why there are none."""

    name: str
    number: int = 0
    pairs: list[tuple[float, float]] = field(default_factory=list)  # (base, head), base sampled first
    kind: str = "time"  # time: seconds of `number` calls; track: the value one call returned
    segments: list[int] = field(default_factory=list)  # pairs from each successive pair of workers
    wall: float = 0.0  # seconds the point took, worker start-ups included
    confirm_rounds: int = 0  # rounds sampled again because the first flagged it (gate.interleave._confirm)
    skipped: str | None = None
    error: str | None = None

    def blocks(self, size: int) -> list[tuple[float, float]]:
        """(median base, median head) per call (seconds, or the track's value), per run of `size`
        consecutive pairs (a short tail is dropped)."""
        out, n = [], max(self.number, 1)
        for i in range(0, len(self.pairs) - size + 1, size):
            chunk = self.pairs[i:i + size]
            out.append((statistics.median(b for b, _ in chunk) / n, statistics.median(h for _, h in chunk) / n))
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "number": self.number, "kind": self.kind, "pairs": [list(p) for p in self.pairs],
                "segments": self.segments, "wall": self.wall, "confirm_rounds": self.confirm_rounds,
                "skipped": self.skipped, "error": self.error}

    @classmethod
    def from_dict(cls, doc: dict) -> "PointPairs":
        return cls(name=doc["name"], number=int(doc["number"]), kind=doc.get("kind", "time"),
                   segments=[int(n) for n in doc.get("segments", [])], wall=float(doc.get("wall", 0.0)),
                   confirm_rounds=int(doc.get("confirm_rounds", 0)),
                   pairs=[(float(b), float(h)) for b, h in doc["pairs"]],
                   skipped=doc.get("skipped"), error=doc.get("error"))


class WorkerError(RuntimeError):
    """A worker died, answered nonsense or took longer than the timeout."""


class _Worker:
    """One live benchmark process and its line protocol (see gate.paired_worker)."""

    def __init__(self, bench_dir: str, point: str, env: dict, cwd: str, log):
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER_SOURCE, bench_dir, point], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                     bufsize=1)
        self.selector = selectors.DefaultSelector()  # one per worker: read() runs once per sample
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def read(self, timeout: float) -> str:
        if not self.selector.select(timeout):
            raise WorkerError(f"no answer within {timeout:g} s")
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"the worker exited (status {self.proc.poll()})")
        return line.strip()

    def ask(self, command: str, timeout: float) -> str:
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError(f"the worker exited (status {self.proc.poll()})") from exc
        return self.read(timeout)

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            self.selector.close()
            self.proc.stdout.close()


# Between its samples a worker waits for the other's; an OpenMP pool spinning meanwhile (libgomp and
# Intel's runtime spin after each parallel region by default) takes the cores the other side is being
# timed on. On the H200 host two 16-thread workers read x4 slower than one for the walk kernel, with a
# per-block CV of 49 %. Passive waiting costs each side the same wake-up per call, so ratios stay fair.
QUIET_THREADS = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}


def worker_env(commit_env: dict) -> dict:
    """The commit's overlay (ASV_PYTHONPATH, see asvtools.run_commit) first on the worker's path, then
    the gate's own PYTHONPATH (where a runner keeps packages such as hydra, as asv's processes see them);
    idle thread pools wait passively (QUIET_THREADS) unless the caller set otherwise."""
    env = {**QUIET_THREADS, **commit_env}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("ASV_PYTHONPATH"), env.get("PYTHONPATH")) if p)
    return env


def _number(call_seconds: float, sample_time: float) -> int:
    return max(1, int(sample_time / max(call_seconds, 1e-9)) + 1) if call_seconds < sample_time else 1


def _seconds(answer: str) -> float:
    """A sample (seconds, or a track's value): a finite number >= 0, or the worker is broken."""
    try:
        value = float(answer)
    except ValueError:
        raise WorkerError(f"expected a number, got {answer[:200]!r}") from None
    if not 0 <= value < float("inf"):
        raise WorkerError(f"expected a finite number >= 0, got {answer!r}")
    return value


def _segment(name: str, sides: dict, spec: PairedSpec, seconds: float, out: PointPairs, log) -> bool:
    """One fresh pair of workers sampled for `seconds`, pairs appended to `out`; False when the point
    is skipped or failed (the reason is in `out`)."""
    workers: dict[str, _Worker] = {}
    try:
        for side in SIDES:
            bench_dir, env, cwd = sides[side]
            workers[side] = _Worker(bench_dir, name, worker_env(env), cwd, log)
        calls = {}
        for side in SIDES:
            answer, _, rest = workers[side].read(spec.timeout).partition(" ")
            if answer == "skip":
                out.skipped = f"{side}: {rest}"
                return False
            if answer != "ready":
                out.error = f"{side}: {rest if answer == 'error' else answer + ' ' + rest}"
                return False
            out.kind, _, call = rest.partition(" ")
            calls[side] = _seconds(call)
        slowest, least = max(calls.values()), spec.warmup_pairs + spec.block
        if 2 * least * slowest > seconds:
            out.skipped = (f"one call takes {slowest:.3g} s: {least} pairs do not fit in {seconds:g} s "
                           "(its passes judge it)")
            return False
        if not out.number:  # fixed by the first pair of workers, so every segment's samples compare
            out.number = 1 if out.kind == "track" else max(_number(c, spec.sample_time) for c in calls.values())
        for side in SIDES:
            workers[side].ask(f"number {out.number}", spec.timeout)
        start, index, before = time.perf_counter(), 0, len(out.pairs)
        while time.perf_counter() - start < seconds or index < least:
            got = {side: _seconds(workers[side].ask("sample", spec.timeout)) for side in SIDES}
            if index >= spec.warmup_pairs:
                out.pairs.append((got["base"], got["head"]))
            index += 1
        out.segments.append(len(out.pairs) - before)
        return True
    except WorkerError as exc:
        out.error = str(exc)
        return False
    finally:
        for worker in workers.values():
            worker.close()


def sample_point(name: str, sides: dict, spec: PairedSpec, log=subprocess.DEVNULL, number: int = 0) -> PointPairs:
    """Pair-sample one point with `spec.restarts` successive fresh pairs of workers (seconds split
    evenly). sides: {"base"|"head": (bench_dir, env, cwd)}; never raises for the point's own failures
    (they land in PointPairs.skipped / .error, and the pairs gathered so far are dropped).
    number: calls per sample, when the samples must compare with an earlier round's (0: chosen here)."""
    out, start = PointPairs(name=name, number=number), time.perf_counter()
    for _ in range(spec.restarts):
        if not _segment(name, sides, spec, spec.seconds / spec.restarts, out, log):
            out.pairs, out.segments = [], []
            break
    out.wall = time.perf_counter() - start
    return out


def extend(point: PointPairs, more: PointPairs) -> None:
    """Append a confirming round's pairs to `point` (same calls per sample), counted in confirm_rounds."""
    if more.number != point.number:
        raise ValueError(f"{point.name}: a round of {more.number} calls per sample cannot join {point.number}")
    point.pairs += more.pairs
    point.segments += more.segments
    point.wall += more.wall
    point.confirm_rounds += 1


def save(path: str, points: list[PointPairs], spec: PairedSpec, **meta) -> None:
    """Every point's raw pairs, for a judge elsewhere (`--passes-from`) or a power study."""
    from rlperf.report.jsonio import write_json

    write_json(path, {"schema": "rlperf.gate.paired/1", "spec": spec.__dict__, **meta,
                      "points": [p.to_dict() for p in points]})


def load(path: str) -> tuple[PairedSpec, list[PointPairs], dict]:
    """A paired.json (save); every sample passes the rule stored results pass (results.corrupt_value),
    else an InfrastructureError names the file and the point."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    spec = PairedSpec(**doc["spec"])
    meta = {k: v for k, v in doc.items() if k not in ("schema", "spec", "points")}
    points = [PointPairs.from_dict(p) for p in doc["points"]]
    for point in points:
        problem = corrupt_value(point.name.split("(", 1)[0], None, [x for pair in point.pairs for x in pair])
        if problem:
            raise InfrastructureError(f"corrupt paired samples {path}: point {point.name!r} has {problem}; "
                                      "re-measure it (the gate compares only finite samples, a time > 0)")
    return spec, points, meta


def bench_dir_of(worktree: str) -> str:
    """The commit's asv benchmark folder (asv.conf.json's benchmark_dir, default `benchmarks`)."""
    conf = os.path.join(worktree, "asv.conf.json")
    name = "benchmarks"
    if os.path.isfile(conf):
        from asv import util as asv_util

        name = asv_util.load_json(conf, js_comments=True).get("benchmark_dir", name)
    return os.path.join(worktree, name)


__all__ = ["PairedSpec", "PointPairs", "WorkerError", "bench_dir_of", "extend", "load", "sample_point", "save",
           "worker_env"]
