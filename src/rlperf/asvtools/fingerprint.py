"""The host a result was measured on: static facts plus three quick measurements, stored beside asv's results.

One machine *name* can cover several hosts (two leases of a GPU host, a runner re-imaged with a new
kernel); results from different hosts must not be compared as if one commit made the difference.
The fingerprint is written as `results/<machine>/fingerprints/<sha8>.fingerprint` (JSON text; the
suffix is not `.json`, so `asv publish` never mistakes it for a result file) for every commit the
gate benchmarks. Static parts: CPU model, a hash of the CPU flags, kernel, core count, memory, GPU
and driver. Measured parts (each a few repeats, so their own noise is stored too): a CPU canary
(~0.2 s of dependent integer work), the host memory copy rate and, with CUDA, the pinned H2D rate.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import time

from rlperf.report.jsonio import write_json

SCHEMA = "rlperf.fingerprint/1"
FOLDER = "fingerprints"
SUFFIX = ".fingerprint"
COPY_BYTES = 64 << 20


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return " ".join(sorted(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return ""


def static_facts() -> dict:
    """What identifies the host without measuring it (cheap, exact)."""
    from rlperf.measure.machine import machine_identity

    ident = machine_identity()
    return {
        "cpu": ident["cpu"],
        "cpu_flags_sha256": hashlib.sha256(_cpu_flags().encode()).hexdigest()[:16],
        "kernel": platform.release(),
        "num_cpu": ident["num_cpu"],
        "ram_gib": round(ident["ram_bytes"] / 2**30, 1),
        "gpu": ident["gpu"],
        "gpu_count": ident["gpu_count"],
        "driver": ident["driver"],
    }


def _repeat(fn, repeats: int) -> list[float]:
    return [fn() for _ in range(repeats)]


def cpu_canary(iterations: int = 400_000) -> float:
    """Seconds for a chain of dependent integer operations (one core, no memory traffic)."""
    x = 1
    start = time.perf_counter()
    for _ in range(iterations):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    elapsed = time.perf_counter() - start
    return elapsed if x >= 0 else -1.0


def host_copy_gbps(nbytes: int = COPY_BYTES) -> float:
    """GB/s of one numpy copy between two written host buffers."""
    import numpy as np

    src = np.ones(nbytes, dtype=np.uint8)
    dst = np.empty_like(src)
    dst[:] = 0
    start = time.perf_counter()
    np.copyto(dst, src)
    return nbytes / (time.perf_counter() - start) / 1e9


def h2d_gbps(nbytes: int = COPY_BYTES) -> float | None:
    """GB/s of a pinned host->device copy, or None without CUDA (not run on a GPU in development)."""
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
    start = time.perf_counter()
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    return nbytes / (time.perf_counter() - start) / 1e9


def measured_facts(repeats: int = 5) -> dict[str, dict]:
    """Each measured quantity as {median, min, max, samples}; 'higher is faster' for rates only."""
    out = {"cpu_canary_s": _repeat(cpu_canary, repeats), "host_copy_gbps": _repeat(host_copy_gbps, repeats)}
    h2d = h2d_gbps()
    if h2d is not None:
        out["h2d_gbps"] = [h2d] + _repeat(h2d_gbps, repeats - 1)
    return {k: {"median": statistics.median(v), "min": min(v), "max": max(v), "samples": v}
            for k, v in out.items()}


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
    from rlperf.gate.exitcodes import InfrastructureError

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


__all__ = ["FOLDER", "SCHEMA", "fingerprint", "load", "measured_facts", "sidecar_path", "static_facts", "store"]
