"""The e2e tests' shared fake (the loop runs against FakeCollector instead of MuJoCo), and the skip of tests
whose learner needs the G1 model."""

import pytest

from rlperf.e2e.loop import collectors
from tests.e2e.test_loop_fake import FakeCollector


@pytest.fixture
def fake_collector(monkeypatch):
    monkeypatch.setattr(collectors, "load_collector_class", lambda: FakeCollector)
    monkeypatch.setattr(collectors, "collector_missing_reason", lambda: None)


@pytest.fixture
def g1_model():
    """Skip where the e2e extra is missing: the walk learner mirrors its batches by the G1 model's joints
    (learner/symmetry.py), so even a synthetic batch needs mujoco and the asset package."""
    from rlperf.e2e.collector.assets import model_missing_reason

    reason = model_missing_reason()
    if reason:
        pytest.skip(reason)
