"""Memory guards that run before any allocation, so an infeasible point is a skip, never a crash."""

from __future__ import annotations

from dataclasses import dataclass

HOST_FRACTION = 0.8  # table + pinned batches must fit in this share of available RAM
DEVICE_SAFETY_FACTOR = 1.15  # the reference benchmark's guard on free device memory


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""


def gib(n: float, digits: int = 2) -> str:
    """`n` bytes as GiB, thousands separated: the one way tables and messages print a memory size."""
    return f"{n / 2**30:,.{digits}f}"


def gib_and_bytes(n: float) -> str:
    """`n` bytes as GiB with the exact byte count, for a guard's reason."""
    return f"{gib(n)} GiB ({int(n):,} B)"


def available_host_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def visible_gpu_free_bytes() -> list[int]:
    """Free bytes per GPU that CUDA_VISIBLE_DEVICES leaves visible (named by index or UUID), in CUDA's
    order; [] without a GPU. From NVML (measure.nvml), so no torch import."""
    from rlperf.measure.nvml import visible_gpus

    return [gpu.free_bytes for gpu in visible_gpus()]


def nvidia_smi_free_bytes() -> list[int]:
    """The old name of visible_gpu_free_bytes, kept while benchmarks/bench_e2e.py calls it."""
    return visible_gpu_free_bytes()


def free_device_bytes(device) -> int:
    import torch

    free, _total = torch.cuda.mem_get_info(device)
    return int(free)


def check_host(need_bytes: int, what: str, available: int | None = None) -> Verdict:
    available = available_host_bytes() if available is None else available
    budget = HOST_FRACTION * available
    if need_bytes > budget:
        return Verdict(False, f"host memory: {what} needs {gib_and_bytes(need_bytes)}, budget is "
                              f"{HOST_FRACTION:g} x available {gib_and_bytes(available)} = {gib_and_bytes(budget)}")
    return Verdict(True)


def check_device(need_bytes: int, what: str, free: int, device_name: str = "cuda") -> Verdict:
    need = need_bytes * DEVICE_SAFETY_FACTOR
    if need > free:
        return Verdict(False, f"device memory on {device_name}: {what} needs {gib_and_bytes(need_bytes)} x "
                              f"{DEVICE_SAFETY_FACTOR} = {gib_and_bytes(need)}, free {gib_and_bytes(free)}")
    return Verdict(True)


def nbytes(obj, _seen=None) -> int:
    """Bytes held by the numpy arrays / tensors inside `obj` (dicts, sequences, dataclasses, objects),
    each counted once: how big a workload's inputs are, measured at a small size and scaled."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if hasattr(obj, "nbytes") and not isinstance(obj, type):
        return int(obj.nbytes)
    if isinstance(obj, dict):
        return sum(nbytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__"):
        return sum(nbytes(v, seen) for v in vars(obj).values())
    if hasattr(obj, "__slots__"):
        return sum(nbytes(getattr(obj, s, None), seen) for s in obj.__slots__)
    return 0


def require_host(need_bytes: int, what: str, flag: str, available: int | None = None) -> None:
    """Refuse, before allocating, a size whose memory the host cannot hold: a UsageError (exit 2) naming
    the bytes needed and available, instead of a MemoryError half-way through a run."""
    from rlperf.errors import UsageError

    verdict = check_host(need_bytes, what, available)
    if not verdict.ok:
        raise UsageError(f"{flag}: {verdict.reason}; give a smaller {flag}")
