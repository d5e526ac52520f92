"""The e2e tests' shared fake: the loop runs against FakeCollector instead of MuJoCo."""

import pytest

from rlperf.e2e.loop import collectors
from tests.e2e.test_loop_fake import FakeCollector


@pytest.fixture
def fake_collector(monkeypatch):
    monkeypatch.setattr(collectors, "load_collector_class", lambda: FakeCollector)
    monkeypatch.setattr(collectors, "collector_missing_reason", lambda: None)
