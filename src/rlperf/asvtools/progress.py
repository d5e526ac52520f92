"""Run asv with a line per point and never a long silence: the console gets asv's status lines, a line
when each benchmark point's process starts, and a heartbeat while one runs long; the log file gets all.

asv prints a benchmark only when all its points are done, with a table over every parameter combination
(n/a for the ones not selected), so a class of slow points is silent for minutes and a short run prints
thousands of lines. Which point runs is read from asv's child processes (`benchmark.py run DIR NAME-IDX`),
which asv_runner has named the same way since asv 0.5; the tables and stderr blocks stay in the log.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time

import psutil

from rlperf.asvtools.bench_plan import Plan

HEARTBEAT_S = 30.0  # the longest the console stays silent while asv works
POLL_S = 0.5
# asv shortens benchmark names to its terminal width ('...KernelNoise.track_x', ambiguous between two
# classes); a wide one keeps them whole in the log, and the console lines are compacted instead
ASV_COLUMNS = "250"
_STATUS = re.compile(r"^(?:· |\[\s*[\d.]+%\] ·+ )")
_TABLE = re.compile(r"^\[\s*[\d.]+%\] ·+ [=-]{3}")
_STDERR_BLOCK = re.compile(r"^\[\s*[\d.]+%\] ·{4} ")


def console_line(line: str) -> bool:
    """Whether one asv output line goes to the console: status lines, not tables or stderr blocks."""
    return bool(_STATUS.match(line)) and not _TABLE.match(line) and not _STDERR_BLOCK.match(line)


def compact(line: str) -> str:
    """An asv status line without the padding asv adds up to its (wide) terminal width."""
    return re.sub(r" {2,}", "  ", line.rstrip())


def running_point(children) -> tuple[str, str] | None:
    """('run', 'bench.Class.fn-IDX') or ('setup_cache', 'bench.Class.fn') of asv's benchmark child, if any."""
    for child in children:
        try:
            cmd = child.cmdline()
        except (psutil.Error, OSError):
            continue
        for mode in ("run", "setup_cache"):
            if mode in cmd and any(c.endswith("benchmark.py") for c in cmd):
                i = cmd.index(mode)
                if len(cmd) > i + 2:
                    return mode, cmd[i + 2]
    return None


class Reporter:
    """Prints to the console and the log; the watcher thread adds point and heartbeat lines."""

    def __init__(self, plan: Plan, log, out=None, clock=time.monotonic):
        self.out = out or sys.stdout
        self.log = log
        self.clock = clock
        self.lock = threading.Lock()
        self.last_print = clock()
        self.longest_gap = 0.0
        self.order = {(p.benchmark, p.index): (k, p) for k, p in enumerate(plan.run, 1)}
        self.total = len(plan.run)
        self.current: tuple[str, str] | None = None
        self.current_since = clock()

    def say(self, text: str, console: bool = True, log: bool = True) -> None:
        with self.lock:
            if log:
                self.log.write(text + "\n")
                self.log.flush()
            if console:
                now = self.clock()
                self.longest_gap = max(self.longest_gap, now - self.last_print)
                self.last_print = now
                print(text, file=self.out, flush=True)

    def asv_line(self, line: str) -> None:
        if console_line(line):
            with self.lock:
                self.log.write(line.rstrip("\n") + "\n")
            self.say(compact(line), console=True, log=False)
        else:
            self.say(line.rstrip("\n"), console=False)

    def _describe(self, found: tuple[str, str]) -> str:
        mode, ident = found
        if mode == "setup_cache":
            return f"setup_cache of {ident.rsplit('.', 1)[0]} (once for all its points)"
        bench, _, idx = ident.rpartition("-")
        hit = self.order.get((bench, int(idx))) if idx.isdigit() else None
        return f"[{hit[0]:>{len(str(self.total))}}/{self.total}] {hit[1].name}" if hit else ident

    def watch(self, found: tuple[str, str] | None) -> None:
        """One poll: announce a new point, or a heartbeat when the console has been quiet too long."""
        now = self.clock()
        if found != self.current:
            self.current, self.current_since = found, now
            if found:
                self.say(f"  {self._describe(found)}")
            return
        if now - self.last_print >= HEARTBEAT_S:
            if self.current:
                self.say(f"    ... still running {self._describe(self.current)} ({now - self.current_since:.0f} s)")
            else:
                self.say(f"    ... asv is working between points ({now - self.last_print:.0f} s since the last line)")


def run_asv(cmd: list[str], plan: Plan, log_path: str, cwd: str, env: dict | None = None,
            out=None) -> tuple[int, float]:
    """Run `cmd` (an `asv run`), streaming as described above; returns (exit status, longest console gap s)."""
    with open(log_path, "a") as log:
        reporter = Reporter(plan, log, out=out)
        reporter.say("$ " + " ".join(cmd), console=False)
        env = dict(os.environ if env is None else env, COLUMNS=ASV_COLUMNS)
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                bufsize=1)
        done = threading.Event()

        def poll():
            parent = psutil.Process(proc.pid)
            while not done.wait(POLL_S):
                try:
                    children = parent.children(recursive=True)
                except psutil.Error:
                    children = []
                reporter.watch(running_point(children))

        watcher = threading.Thread(target=poll, daemon=True)
        watcher.start()
        for line in proc.stdout:
            reporter.asv_line(line)
        status = proc.wait()
        done.set()
        watcher.join()
        return status, reporter.longest_gap


__all__ = ["ASV_COLUMNS", "HEARTBEAT_S", "Reporter", "compact", "console_line", "run_asv", "running_point"]
