"""GPU facts from NVML through `pynvml` (the nvidia-ml-py bindings): per GPU its index, UUID, name and
memory; per host the driver and the CUDA version it supports; and which GPUs CUDA_VISIBLE_DEVICES
leaves visible, named by index or by UUID. No torch import: deciding a skip costs milliseconds.

The formats are those of the stored machine files (results/asv/<machine>/machine.json), so a host
keeps matching what it stored: memory in bytes as CUDA reports a device's total (NVML's total less the
share the driver and firmware reserve, which is torch's `total_memory`), the CUDA version as
"major.minor" of the driver's (nvmlSystemGetCudaDriverVersion's 13000 -> "13.0").

Why a fallback to nvidia-smi: pynvml is a declared dependency, but an environment installed without
it (`--no-deps`, an image built before it was declared) still has nvidia-smi, which ships with the
driver. It is also tried when NVML fails to start, though nvidia-smi uses NVML and will most likely
fail too. Its CSV gives memory in MiB, so its totals are rounded to a MiB and would not match a
machine file written through NVML. Without either, the host has no GPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

MIB = 2**20


@dataclass(frozen=True)
class Gpu:
    index: int  # NVML's (and nvidia-smi's) index; a MIG device carries its parent GPU's
    uuid: str  # "GPU-..." for a whole GPU, "MIG-..." for a MIG device
    name: str
    total_bytes: int  # as CUDA reports it (torch's total_memory)
    free_bytes: int
    mig: bool = False


@dataclass(frozen=True)
class GpuHost:
    gpus: tuple[Gpu, ...] = ()  # every whole GPU, then every MIG device, in NVML's order
    driver: str | None = None  # "580.159.04"
    cuda: str | None = None  # the driver's CUDA version, "13.0"
    source: str = "none"  # "nvml", "nvidia-smi" or "none"


def cuda_version(code: int) -> str:
    """NVML's CUDA version integer (1000 x major + 10 x minor) as "major.minor": 13000 -> "13.0"."""
    return f"{code // 1000}.{code % 1000 // 10}"


def read_host() -> GpuHost:
    """Every GPU of this host and its driver: NVML, else nvidia-smi, else none (module docstring)."""
    try:
        import pynvml
    except ImportError:
        return _from_smi()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return _from_smi()
    try:
        return _from_nvml(pynvml)
    except pynvml.NVMLError:  # a GPU that stopped answering mid-read: ask the CLI, as at a failed start
        return _from_smi()
    finally:
        pynvml.nvmlShutdown()


def visible(gpus: tuple[Gpu, ...] | list[Gpu], cuda_visible_devices: str | None) -> list[Gpu]:
    """The GPUs CUDA would enumerate, in its order, under CUDA_VISIBLE_DEVICES = `cuda_visible_devices`.

    Unset: every whole GPU. Each entry is an index (a whole GPU's, in NVML's order, which is CUDA's on a
    host of one GPU model) or a UUID or a unique prefix of one ("GPU-..." a whole GPU, "MIG-..." a MIG
    device). As in CUDA, the list ends at the first entry that names no device (so "" hides every GPU);
    a device named twice counts once. The legacy "MIG-GPU-<uuid>/<gi>/<ci>" form is not read.
    """
    whole = [g for g in gpus if not g.mig]
    if cuda_visible_devices is None:
        return whole
    out: list[Gpu] = []
    for entry in (e.strip() for e in cuda_visible_devices.split(",")):
        gpu = _named(entry, gpus, whole)
        if gpu is None:
            break
        if gpu not in out:
            out.append(gpu)
    return out


def visible_gpus() -> list[Gpu]:
    """This host's GPUs as CUDA_VISIBLE_DEVICES leaves them, read now (free memory changes)."""
    return visible(read_host().gpus, os.environ.get("CUDA_VISIBLE_DEVICES"))


def _named(entry: str, gpus, whole: list[Gpu]) -> Gpu | None:
    if entry.isdigit():
        return next((g for g in whole if g.index == int(entry)), None)
    prefix = entry.lower()
    if prefix.startswith(("gpu-", "mig-")):
        matches = [g for g in gpus if g.uuid.lower().startswith(prefix)]
        return matches[0] if len(matches) == 1 else None
    return None


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _memory(pynvml, handle) -> tuple[int, int]:
    """(total as CUDA reports it, free). The v2 call says what the driver reserves; a driver without
    it gives the v1 total, which includes that reserve (a few hundred MiB more than CUDA's)."""
    try:
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
        return int(mem.total - mem.reserved), int(mem.free)
    except pynvml.NVMLError:
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        return int(mem.total), int(mem.free)


def _device(pynvml, handle, index: int, mig: bool = False) -> Gpu:
    total, free = _memory(pynvml, handle)
    return Gpu(index=index, uuid=_text(pynvml.nvmlDeviceGetUUID(handle)), name=_text(pynvml.nvmlDeviceGetName(handle)),
               total_bytes=total, free_bytes=free, mig=mig)


def _mig_devices(pynvml, handle, index: int) -> list[Gpu]:
    """The MIG devices of a GPU in MIG mode; none for a GPU without MIG or with it off."""
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
    except pynvml.NVMLError:  # NOT_SUPPORTED: a GPU without MIG
        return []
    if current != pynvml.NVML_DEVICE_MIG_ENABLE:
        return []
    out = []
    for slot in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)):
        try:
            mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except pynvml.NVMLError:  # NOT_FOUND: an empty slot
            continue
        out.append(_device(pynvml, mig, index, mig=True))
    return out


def _from_nvml(pynvml) -> GpuHost:
    gpus, migs = [], []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        gpus.append(_device(pynvml, handle, index))
        migs += _mig_devices(pynvml, handle, index)
    return GpuHost(gpus=tuple(gpus + migs), driver=_text(pynvml.nvmlSystemGetDriverVersion()),
                   cuda=cuda_version(pynvml.nvmlSystemGetCudaDriverVersion()), source="nvml")


_SMI_FIELDS = "index,uuid,name,memory.total,memory.reserved,memory.free,driver_version"
_SMI_CUDA = re.compile(r"CUDA Version\s*:\s*(\d+\.\d+)")


def _smi(*args: str) -> str | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _mib(cell: str) -> int:
    """A MiB cell in bytes; "[N/A]" (a field this GPU does not report) as 0."""
    return int(cell) * MIB if cell.isdigit() else 0


def _from_smi() -> GpuHost:
    """The same facts from nvidia-smi's CSV (MiB); memory.reserved is asked separately from the rest
    since an old nvidia-smi does not know it."""
    csv = _smi(f"--query-gpu={_SMI_FIELDS}", "--format=csv,noheader,nounits")
    reserved = csv is not None
    if csv is None:
        csv = _smi(f"--query-gpu={_SMI_FIELDS.replace('memory.reserved,', '')}", "--format=csv,noheader,nounits")
    if csv is None:
        return GpuHost()
    gpus, driver = [], None
    for line in csv.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        index, uuid, name, total, *rest = cells
        held, free, driver = (rest if reserved else ["0", *rest])
        gpus.append(Gpu(index=int(index), uuid=uuid, name=name, total_bytes=_mib(total) - _mib(held),
                        free_bytes=_mib(free)))
    banner = _smi() or ""
    found = _SMI_CUDA.search(banner)
    return GpuHost(gpus=tuple(gpus), driver=driver, cuda=found.group(1) if found else None, source="nvidia-smi")


__all__ = ["Gpu", "GpuHost", "cuda_version", "read_host", "visible", "visible_gpus"]
