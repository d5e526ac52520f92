"""The noise-generation variants, each a zero-argument fill of one preallocated (num_envs, width) buffer.

`make(variant, dist, num_envs, scales, threads, seed)` returns a `Filler`: `fill()` draws the next step's
values times the per-column scales into `out`. The numpy variants keep their Generator state across calls
(as an env does); the counter variant advances its step counter, so every call draws new values.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rlperf.envs.noise.cases import DISTS, VARIANTS


@dataclass
class Filler:
    """A prepared variant: `fill()` writes one step of noise into `out`; `close()` frees its pool."""

    variant: str
    dist: str
    out: np.ndarray
    fill: Callable[[], None]
    close: Callable[[], None] = field(default=lambda: None)


def _generator_fill(dist, buf, scales, rng):
    """Draw into `buf` in place with `rng` (no temporaries), then scale per column."""

    def fill():
        if dist == "uniform":
            rng.random(out=buf, dtype=np.float32)
            np.multiply(buf, np.float32(2), out=buf)
            np.subtract(buf, np.float32(1), out=buf)
        else:
            rng.standard_normal(out=buf, dtype=np.float32)
        np.multiply(buf, scales, out=buf)

    return fill


def _numpy_alloc(dist, out, scales, seed):
    np.random.seed(seed)

    def fill():
        if dist == "uniform":
            out[:] = np.random.uniform(-1.0, 1.0, out.shape).astype(np.float32) * scales
        else:
            out[:] = np.random.standard_normal(out.shape).astype(np.float32) * scales

    return fill


def _numpy_threads(dist, out, scales, seed, threads):
    """One Generator per row slice; numpy releases the GIL while filling, so the slices run in parallel.

    The values depend on the thread count (each slice is its own stream); the counter variant's do not.
    """
    rngs = [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(seed).spawn(threads)]
    bounds = np.linspace(0, out.shape[0], threads + 1).astype(int)
    workers = [_generator_fill(dist, out[lo:hi], scales, rng)
               for lo, hi, rng in zip(bounds[:-1], bounds[1:], rngs)]
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="noise")

    def fill():
        for future in [pool.submit(w) for w in workers]:
            future.result()

    return fill, lambda: pool.shutdown(wait=True)


def _counter(dist, out, scales, seed, threads):
    import numba

    from rlperf.envs.noise.counter import fill_normal, fill_uniform

    kernel = fill_uniform if dist == "uniform" else fill_normal
    state = {"step": 0}

    def fill():
        numba.set_num_threads(threads)  # the mask is thread-local: re-applied on the launching thread
        kernel(np.uint64(seed), np.uint64(state["step"]), scales, out)
        state["step"] += 1

    return fill


def make(variant: str, dist: str, num_envs: int, scales: np.ndarray, threads: int = 1, seed: int = 0) -> Filler:
    """A prepared variant writing (num_envs, len(scales)) float32 values; ValueError on an unknown name."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown noise variant {variant!r}; valid: {', '.join(VARIANTS)}")
    if dist not in DISTS:
        raise ValueError(f"unknown distribution {dist!r}; valid: {', '.join(DISTS)}")
    scales = np.ascontiguousarray(scales, dtype=np.float32)
    out = np.zeros((num_envs, scales.size), dtype=np.float32)
    if variant == "numpy":
        return Filler(variant, dist, out, _generator_fill(dist, out, scales, np.random.default_rng(seed)))
    if variant == "numpy-alloc":
        return Filler(variant, dist, out, _numpy_alloc(dist, out, scales, seed))
    if variant == "numpy-threads":
        fill, close = _numpy_threads(dist, out, scales, seed, threads)
        return Filler(variant, dist, out, fill, close)
    return Filler(variant, dist, out, _counter(dist, out, scales, seed, threads))
