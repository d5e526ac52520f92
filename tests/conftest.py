"""Shared fixtures: hermetic Numba cache, GPU marker handling."""

from __future__ import annotations

import os

import pytest


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
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _hermetic_numba_cache(tmp_path_factory):
    """Compiled kernels go to a per-session folder, never into the source tree."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        os.environ["NUMBA_CACHE_DIR"] = str(tmp_path_factory.mktemp("numba_cache"))
    yield
