"""rlperf.asvtools.browser's pipe to the browser and rlperf.asvtools.site_check's exits, without Chromium:
a fake browser (a Python script) speaks the DevTools protocol on fds 3 and 4 as Chromium does."""

from __future__ import annotations

import sys
import textwrap

import pytest

from rlperf.asvtools import browser, site_check
from rlperf.cli import main
from rlperf.asvtools.browser import Browser, BrowserError

FAKE = textwrap.dedent("""\
    #!{python}
    import json, os, sys
    if os.environ.get("FAKE_FAIL"):
        print("fake chromium: cannot open display", file=sys.stderr)
        sys.exit(3)
    commands, replies = os.fdopen(3, "rb"), os.fdopen(4, "wb", buffering=0)
    buffer = b""
    while True:
        chunk = commands.read1(65536)
        if not chunk:
            break
        buffer += chunk
        *messages, buffer = buffer.split(b"\\0")
        for raw in messages:
            msg = json.loads(raw)
            method, result = msg["method"], {{}}
            if method == "Target.getTargets":
                result = {{"targetInfos": [{{"type": "page", "targetId": "T1"}}]}}
            elif method == "Target.attachToTarget":
                result = {{"sessionId": "S1"}}
            elif method == "Runtime.evaluate":
                event = {{"method": "Runtime.exceptionThrown", "sessionId": "S1",
                         "params": {{"exceptionDetails": {{"text": "Uncaught boom"}}}}}}
                replies.write(json.dumps(event).encode() + b"\\0")
                result = {{"result": {{"value": len(msg["params"]["expression"])}}}}
            elif method == "Browser.close":
                replies.write(json.dumps({{"id": msg["id"], "result": {{}}}}).encode() + b"\\0")
                sys.exit(0)
            reply = {{"id": msg["id"], "result": result}}
            if "sessionId" in msg:
                reply["sessionId"] = msg["sessionId"]
            replies.write(json.dumps(reply).encode() + b"\\0")
    """)


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "chromium"
    path.write_text(FAKE.format(python=sys.executable))
    path.chmod(0o755)
    return str(path)


def test_commands_go_out_on_fd_3_and_replies_and_page_events_come_back_on_fd_4(fake):
    with Browser(fake, timeout=10) as browser:
        assert browser.session == "S1"
        assert browser.evaluate("1 + 2") == 5  # the fake answers the expression's length
        assert any(e["method"] == "Runtime.exceptionThrown" for e in browser.events)


def test_a_browser_that_cannot_start_is_named_with_its_output(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "1")
    with pytest.raises(BrowserError, match="cannot open display"):
        Browser(fake, timeout=10)


def test_check_exits_2_without_a_site_or_a_browser(tmp_path, monkeypatch, capsys):
    assert main(["site", "check", str(tmp_path)]) == 2
    assert "no " in capsys.readouterr().err
    (tmp_path / "index.json").write_text("{}")
    monkeypatch.setattr(browser, "find_chromium", lambda: None)
    assert main(["site", "check", str(tmp_path)]) == 2
    assert "chromium not found" in capsys.readouterr().err


def test_a_site_without_rlperfs_step_fails_before_any_browser_starts(tmp_path):
    (tmp_path / "index.json").write_text('{"benchmarks": {}, "graph_param_list": []}')
    report = site_check.check(tmp_path, "/nonexistent/chromium")
    assert report.failures and "rlperf-site.js" in report.failures[0]
