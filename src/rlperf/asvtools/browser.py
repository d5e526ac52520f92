"""Headless Chromium driven over the DevTools protocol on a pipe, with the standard library only.

`--remote-debugging-pipe` makes Chromium read commands on its fd 3 and write replies and events on its
fd 4, each a JSON message ending in NUL: no driver, no websocket library, no port. Used by
rlperf.asvtools.site_check to read the published site as a person's browser renders it, with every
page error the browser reports (uncaught exceptions, console errors, failed loads).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio")


class BrowserError(Exception):
    """The browser could not be started or stopped answering (its output is in the message)."""


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _high(fd: int) -> int:
    """A copy of fd at 10 or above (fd closed): bash's 3</4> redirections that start the browser never hit it."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    """One headless Chromium with one page attached; `events` collects every event of that page."""

    def __init__(self, executable: str, width: int = 1400, height: int = 1000, timeout: float = 20.0):
        self.timeout = timeout
        self.events: list[dict] = []
        self._replies: dict[int, dict] = {}
        self._next_id = 0
        self._cond = threading.Condition()
        self._profile = tempfile.mkdtemp(prefix="rlperf-chromium-")
        self._log = tempfile.TemporaryFile()
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        cmd_r, res_w = _high(cmd_r), _high(res_w)
        shell = f'exec "$@" 3<&{cmd_r} 4>&{res_w} {cmd_r}<&- {res_w}>&-'
        argv = [executable, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}", "about:blank"]
        try:
            self._proc = subprocess.Popen(["bash", "-c", shell, "chromium", *argv], pass_fds=(cmd_r, res_w),
                                          stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        finally:
            os.close(cmd_r)
            os.close(res_w)
        self._out = os.fdopen(cmd_w, "wb", buffering=0)
        self._in = os.fdopen(res_r, "rb", buffering=0)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None
        try:
            pages = [t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if not pages:
                raise BrowserError("the browser opened no page")
            self.session = self.send("Target.attachToTarget", targetId=pages[0]["targetId"], flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable", session=True)
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                with self._cond:
                    if "id" in message:
                        self._replies[message["id"]] = message
                    elif message.get("sessionId") == self.session:
                        self.events.append(message)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def output(self) -> str:
        """The browser's own output so far (its last 40 lines), for a message that says why it failed."""
        self._log.seek(0)
        return "\n".join(self._log.read().decode(errors="replace").splitlines()[-40:])

    def send(self, method: str, session: bool = False, **params) -> dict:
        """One command (to the attached page when `session`), its result; BrowserError on an error reply."""
        with self._cond:
            self._next_id += 1
            ident = self._next_id
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        try:
            self._out.write(json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError(f"the browser exited; its output:\n{self.output()}") from None
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    raise BrowserError(f"no answer to {method} within {self.timeout:.0f} s; browser output:\n"
                                       f"{self.output()}")
                self._cond.wait(left)
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(f"evaluating {expression[:80]!r}: "
                               f"{details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)

    def wait_for(self, expression: str, timeout: float | None = None, interval: float = 0.1):
        """Poll a JavaScript expression until it is truthy: its value, or None at the timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = self.evaluate(expression)
            if value or time.monotonic() >= deadline:
                return value or None
            time.sleep(interval)

    def close(self) -> None:
        if self._reader.is_alive():
            try:
                self.send("Browser.close")
            except BrowserError:
                pass
        try:
            self._out.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._in.close()
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["Browser", "BrowserError", "FLAGS", "find_chromium"]
