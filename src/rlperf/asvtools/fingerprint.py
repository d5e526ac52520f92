"""The host a result was measured on: static facts plus three quick measurements, stored beside asv's results.

One machine *name* can cover several hosts (two leases of a GPU host, a runner re-imaged with a new
kernel); results from different hosts must not be compared as if one commit made the difference.
The fingerprint is written as `results/<machine>/fingerprints/<sha8>.fingerprint` (JSON text; the
suffix is not `.json`, so `asv publish` never mistakes it for a result file) for every commit the
gate benchmarks. Static parts: CPU model, a hash of the CPU flags, kernel, core count, memory, GPU
and driver. Measured parts (each a few repeats, so their own noise is stored too): a CPU canary
(5 x ~0.03 s of dependent integer work), the host memory copy rate and, with CUDA, the pinned H2D rate.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time

from rlperf.measure.machine import cpu_flags_sha256, cpu_model
from rlperf.measure.nvml import visible_gpus
from rlperf.report.jsonio import write_json

SCHEMA = "rlperf.fingerprint/1"
FOLDER = "fingerprints"
SUFFIX = ".fingerprint"
COPY_BYTES = 32 << 20


def static_facts() -> dict:
    """What identifies the host without measuring it (cheap, exact; GPU and driver are in asv's params)."""
    import psutil

    return {
        "cpu": cpu_model(),
        "cpu_flags_sha256": cpu_flags_sha256(),
        "kernel": platform.release(),
        "num_cpu": os.cpu_count() or 1,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
    }


def cpu_canary(repeats: int = 5, iterations: int = 100_000) -> list[float]:
    """Seconds per repeat of a chain of dependent integer operations (one core, no memory traffic)."""
    out = []
    for _ in range(repeats):
        x = 1
        start = time.perf_counter()
        for _ in range(iterations):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(time.perf_counter() - start)
    return out


def host_copy_gbps(repeats: int = 5, nbytes: int = COPY_BYTES) -> list[float]:
    """GB/s per repeat of one numpy copy between two host buffers written beforehand."""
    import numpy as np

    src = np.ones(nbytes, dtype=np.uint8)
    dst = np.zeros_like(src)
    np.copyto(dst, src)
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        out.append(nbytes / (time.perf_counter() - start) / 1e9)
    return out


def h2d_gbps(repeats: int = 5, nbytes: int = COPY_BYTES) -> list[float] | None:
    """GB/s per repeat of a pinned host->device copy, or None without CUDA.

    Only this function touches CUDA; it has not been run on a GPU machine yet (see docs/gate.md)."""
    if not visible_gpus():  # no visible GPU, no CUDA: skip the slow torch import
        return None
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    src = torch.ones(nbytes, dtype=torch.uint8).pin_memory()
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        out.append(nbytes / (time.perf_counter() - start) / 1e9)
    return out


def measured_facts(cuda: bool = True) -> dict[str, dict]:
    """Each quantity as {best, median, min, max, samples}: best is the least disturbed repeat (the
    fastest time, the highest rate), the spread its own noise."""
    out = {"cpu_canary_s": cpu_canary(), "host_copy_gbps": host_copy_gbps()}
    h2d = h2d_gbps() if cuda else None
    if h2d is not None:
        out["h2d_gbps"] = h2d
    return {k: {"best": min(v) if k.endswith("_s") else max(v), "median": statistics.median(v), "min": min(v),
                "max": max(v), "samples": v} for k, v in out.items()}


def fingerprint() -> dict:
    """The whole fingerprint of this host, now."""
    return {"schema": SCHEMA, "static": static_facts(), "measured": measured_facts(),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def sidecar_path(results_dir: str, machine: str, sha: str) -> str:
    return os.path.join(results_dir, machine, FOLDER, sha[:8] + SUFFIX)


def store(results_dir: str, machine: str, sha: str, doc: dict) -> str:
    """Write the fingerprint of the session that measured `sha` (atomically)."""
    return str(write_json(sidecar_path(results_dir, machine, sha), doc))


def load(results_dir: str, machine: str, sha: str) -> dict | None:
    """The stored fingerprint of `sha`, or None when it has none (results written before fingerprints)."""
    from rlperf.errors import InfrastructureError

    path = sidecar_path(results_dir, machine, sha)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"unreadable host fingerprint {path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InfrastructureError(f"malformed host fingerprint {path}: schema is not {SCHEMA!r}")
    return doc


def newest(results_dir: str, machine: str) -> dict | None:
    """The most recently measured fingerprint stored under `machine` (None when there is none): the host
    the machine's history was last measured on."""
    folder = os.path.join(results_dir, machine, FOLDER)
    docs = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(SUFFIX):
            doc = load(results_dir, machine, name[:-len(SUFFIX)])
            docs.append((str(doc.get("measured_at", "")), name, doc))
    return max(docs)[2] if docs else None


__all__ = ["FOLDER", "SCHEMA", "fingerprint", "load", "measured_facts", "newest", "sidecar_path", "static_facts",
           "store"]
