"""Shared test set-up: a hermetic Numba cache, clean skips of `gpu` tests without CUDA, and one torch
intra-op thread for the tiny-network e2e tests."""

from __future__ import annotations

import os
import tempfile

import pytest

# Numba reads NUMBA_CACHE_DIR once, at import: set it before any test module imports numba, so
# compiled kernels go to a per-session folder and never into the source tree or a stale cache.
os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="rlperf-numba-cache-"))


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA: no CUDA device visible")
    for item in items:
        if item.get_closest_marker("gpu") is not None:  # the marker, not a keyword: a folder named gpu is not one
            item.add_marker(skip)


@pytest.fixture
def one_torch_thread():
    """Tiny networks: one intra-op thread (two spin against each other on a loaded 2-core box).
    Modules opt in with `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
