"""Machine identity as data: stored with every result and used as asv facets."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re

from rlperf.errors import UsageError


def _cpuinfo_value(*keys: str) -> str:
    """The first /proc/cpuinfo value under any of `keys` ('' where there is none, as off Linux)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(keys):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_model() -> str:
    """The CPU model string (the platform's words where /proc/cpuinfo has none)."""
    return _cpuinfo_value("model name") or platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def cpu_flags_sha256() -> str:
    """First 16 hex digits of the sha256 of the sorted CPU flags.

    Why: a cloud pool can hand out a different CPU generation under the very same model string
    ('Intel(R) Xeon(R) Processor', 'AMD EPYC'); the flags are what tells them apart (docs/gate.md)."""
    flags = " ".join(sorted(_cpuinfo_value("flags", "Features").split()))
    return hashlib.sha256(flags.encode()).hexdigest()[:16]


def _ram_bytes() -> tuple[int, int]:
    import psutil

    vm = psutil.virtual_memory()
    return int(vm.total), int(vm.available)


def _torch_version() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


def gpu_facts(host=None) -> dict:
    """GPU model, count, memory, driver and CUDA of the GPUs CUDA_VISIBLE_DEVICES leaves visible, from
    NVML (measure.nvml; no torch import), in the formats the stored machine files hold. The first visible
    GPU names the model, as torch's device 0 did; driver and CUDA are None when no GPU is visible."""
    from rlperf.measure import nvml

    host = host if host is not None else nvml.read_host()
    gpus = nvml.visible(host.gpus, os.environ.get("CUDA_VISIBLE_DEVICES"))
    if not gpus:
        return {"cuda": None, "gpu": "none", "gpu_count": 0, "gpu_memory_bytes": 0, "driver": None}
    return {"cuda": host.cuda, "gpu": gpus[0].name, "gpu_count": len(gpus), "gpu_memory_bytes": gpus[0].total_bytes,
            "driver": host.driver}


@functools.lru_cache(maxsize=1)
def machine_identity() -> dict:
    """CPU, cores, RAM, GPU model and count, driver, CUDA, torch, numba: one flat dict of facts."""
    import numpy

    total, available = _ram_bytes()
    ident = {
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags_sha256(),
        "num_cpu": os.cpu_count() or 1,
        "ram_bytes": total,
        "ram_available_bytes_at_start": available,
        "os": f"{platform.system()} {platform.release()}",
        "arch": platform.machine(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
    }
    ident["torch"] = _torch_version()
    ident.update(gpu_facts())
    try:
        import numba

        ident["numba"] = numba.__version__
    except ImportError:
        ident["numba"] = None
    ident["name"] = machine_name(ident)
    return ident


def _slug(text: str) -> str:
    text = re.sub(r"\(r\)|\(tm\)|cpu|processor|@.*$", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def machine_name(ident: dict | None = None) -> str:
    """A stable name for the results folder: RLPERF_MACHINE, else '<gpu>x<n>-<cpus>vcpu-<cpu model>'."""
    if os.environ.get("RLPERF_MACHINE"):
        return os.environ["RLPERF_MACHINE"]
    ident = ident or machine_identity()
    gpu = f"{_slug(ident['gpu'])}x{ident['gpu_count']}" if ident["gpu_count"] else "cpu"
    return f"{gpu}-{ident['num_cpu']}vcpu-{_slug(ident['cpu'])}"[:80]


# A machine name becomes a folder (results/<machine>/) and a key of asv's machine file: one safe path
# component, so `--machine ../../x` cannot write outside the results folder.
MACHINE_NAME_RULE = ("letters, digits, '.', '_' and '-' only, not starting with '.', "
                     "at most 100 characters")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


def check_machine_name(name: str, what: str = "--machine") -> str:
    """`name` when it is a safe machine name (MACHINE_NAME_RULE), else a UsageError naming the rule."""
    if not _SAFE_NAME.fullmatch(name):
        raise UsageError(f"{what} {name!r} is not a valid machine name: use {MACHINE_NAME_RULE} "
                         "(it names the results folder <results-dir>/<machine>/)")
    return name


def one_line(ident: dict | None = None) -> str:
    """'CPU: … (n cores) | GPU: … | Memory: … GB', the reference tools' device line."""
    ident = ident or machine_identity()
    gpu = f"{ident['gpu']} x{ident['gpu_count']}" if ident["gpu_count"] else "none"
    return (f"CPU: {ident['cpu']} ({ident['num_cpu']} cores) | GPU: {gpu} | "
            f"Memory: {ident['ram_bytes'] / 1e9:.0f} GB")
