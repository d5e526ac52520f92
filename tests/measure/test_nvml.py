"""measure.nvml: GPU facts through a fake pynvml, in the stored machine file's exact formats; the
CUDA_VISIBLE_DEVICES mapping by index and by UUID; the nvidia-smi fallback; the free-memory guard."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from rlperf.asvtools.machine_file import machine_entry
from rlperf.measure import guards, nvml
from rlperf.measure.machine import gpu_facts

H200_MACHINE_JSON = Path(__file__).resolve().parents[2] / "results/asv/nvidia-h200x1-16vcpu-intel-xeon/machine.json"
# What pynvml returned on that H200 (read on 2026-12-03): NVML's total includes the driver's reserve,
# CUDA's total (torch's total_memory, stored as gpu_memory) does not.
H200 = dict(uuid="GPU-589c5a62-eede-cf93-03f1-c8c713e669dd", name="NVIDIA H200", total=150754820096,
            reserved=644939776, free=150109880320)


class NVMLError(Exception):
    pass


def fake_pynvml(gpus, *, driver="580.159.04", cuda=13000, init_fails=False, v2=True, migs=None):
    """A pynvml stand-in: `gpus` are dicts (uuid, name, total, reserved, free); `migs` maps a GPU's
    index to its MIG devices (same dicts), and puts that GPU in MIG mode."""
    migs = migs or {}
    m = types.ModuleType("pynvml")
    m.NVMLError, m.NVML_DEVICE_MIG_ENABLE, m.nvmlMemory_v2 = NVMLError, 1, object()
    m.calls = []

    def init():
        m.calls.append("init")
        if init_fails:
            raise NVMLError("Driver Not Loaded")

    def memory(handle, version=None):
        d = handle["d"]
        if version is None:
            return types.SimpleNamespace(total=d["total"], free=d["free"], used=d["total"] - d["free"])
        if not v2 or version is not m.nvmlMemory_v2:
            raise NVMLError("Function Not Found")
        return types.SimpleNamespace(total=d["total"], reserved=d["reserved"], free=d["free"], used=0)

    def mig_mode(handle):
        if handle["i"] not in migs:
            raise NVMLError("Not Supported")
        return (1, 1)

    def mig_handle(handle, slot):
        devices = migs[handle["i"]]
        if slot >= len(devices) or devices[slot] is None:
            raise NVMLError("Not Found")
        return {"d": devices[slot], "i": handle["i"]}

    m.nvmlInit = init
    m.nvmlShutdown = lambda: m.calls.append("shutdown")
    m.nvmlDeviceGetCount = lambda: len(gpus)
    m.nvmlDeviceGetHandleByIndex = lambda i: {"d": gpus[i], "i": i}
    m.nvmlDeviceGetName = lambda h: h["d"]["name"].encode()  # older bindings return bytes
    m.nvmlDeviceGetUUID = lambda h: h["d"]["uuid"]
    m.nvmlDeviceGetMemoryInfo = memory
    m.nvmlSystemGetDriverVersion = lambda: driver
    m.nvmlSystemGetCudaDriverVersion = lambda: cuda
    m.nvmlDeviceGetMigMode = mig_mode
    m.nvmlDeviceGetMaxMigDeviceCount = lambda h: 7
    m.nvmlDeviceGetMigDeviceHandleByIndex = mig_handle
    return m


def gpu(n: int, **kw) -> dict:
    return {"uuid": f"GPU-{n}{n}{n}{n}aaaa-0000", "name": "NVIDIA H200", "total": 100 * 2**30,
            "reserved": 2**29, "free": (n + 1) * 2**30} | kw


@pytest.fixture
def use(monkeypatch):
    """Install a fake pynvml (or None: not installed) and forbid the nvidia-smi fallback unless a test
    gives one."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(nvml, "_smi", lambda *args: pytest.fail("nvidia-smi asked while NVML answers"))

    def install(module):
        monkeypatch.setitem(sys.modules, "pynvml", module)
        return module
    return install


def test_the_h200_facts_come_out_exactly_as_the_stored_machine_file_has_them(use):
    use(fake_pynvml([H200]))
    stored = json.loads(H200_MACHINE_JSON.read_text())
    entry = machine_entry({**_cpu_part(stored), **gpu_facts(), "torch": stored["torch"], "numba": stored["numba"],
                           "numpy": stored["numpy"]}, name=stored["machine"])
    for key in ("gpu", "gpu_count", "gpu_memory", "driver", "cuda"):
        assert entry[key] == stored[key], key


def _cpu_part(stored: dict) -> dict:
    return {"os": stored["os"], "arch": stored["arch"], "cpu": stored["cpu"], "cpu_flags": stored["cpu_flags"],
            "num_cpu": stored["num_cpu"], "ram_bytes": stored["ram"]}


@pytest.mark.parametrize("code, text", [(13000, "13.0"), (12020, "12.2"), (11080, "11.8"), (12090, "12.9")])
def test_the_cuda_version_integer_reads_as_major_dot_minor(code, text):
    assert nvml.cuda_version(code) == text


def test_nvml_is_started_and_shut_down_once_per_read(use):
    fake = use(fake_pynvml([gpu(0)]))
    host = nvml.read_host()
    assert host.source == "nvml" and fake.calls == ["init", "shutdown"]
    assert host.gpus[0].name == "NVIDIA H200" and host.gpus[0].total_bytes == 100 * 2**30 - 2**29


def test_a_driver_without_the_v2_memory_call_gives_nvmls_total(use):
    use(fake_pynvml([gpu(0)], v2=False))
    assert nvml.read_host().gpus[0].total_bytes == 100 * 2**30


FOUR = [gpu(0), gpu(1), gpu(2), gpu(3)]


@pytest.mark.parametrize("cvd, order", [
    (None, [0, 1, 2, 3]),  # unset: every GPU
    ("", []),  # set and empty: none
    ("2,0", [2, 0]),  # CUDA's order is the list's
    (" 3 , 1 ", [3, 1]),
    ("1,9,2", [1]),  # the list ends at the first entry naming no device
    ("1,x,2", [1]),
    ("1,1,2", [1, 2]),  # named twice, counted once
    ("GPU-2222aaaa-0000", [2]),  # a full UUID
    ("gpu-3333,0", [3, 0]),  # a unique prefix, any case, mixed with an index
    ("GPU-", []),  # a prefix of every UUID names no single device
])
def test_cuda_visible_devices_maps_by_index_and_by_uuid(use, monkeypatch, cvd, order):
    use(fake_pynvml(FOUR))
    if cvd is not None:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cvd)
    assert [g.index for g in nvml.visible_gpus()] == order
    assert guards.visible_gpu_free_bytes() == [(i + 1) * 2**30 for i in order]


def test_a_mig_uuid_names_a_mig_device_and_indices_name_whole_gpus(use, monkeypatch):
    slice_a = gpu(7, uuid="MIG-aaaa1111-2222", name="NVIDIA H200 MIG 1g.18gb", total=18 * 2**30, free=17 * 2**30)
    slice_b = gpu(8, uuid="MIG-bbbb1111-2222", name="NVIDIA H200 MIG 1g.18gb", total=18 * 2**30, free=16 * 2**30)
    use(fake_pynvml([gpu(0), gpu(1)], migs={1: [slice_a, None, slice_b]}))  # slot 1 empty
    host = nvml.read_host()
    assert [(g.uuid, g.index, g.mig) for g in host.gpus if g.mig] == [("MIG-aaaa1111-2222", 1, True),
                                                                     ("MIG-bbbb1111-2222", 1, True)]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-bbbb")
    assert guards.visible_gpu_free_bytes() == [16 * 2**30]
    facts = gpu_facts()
    assert (facts["gpu"], facts["gpu_count"], facts["gpu_memory_bytes"]) == ("NVIDIA H200 MIG 1g.18gb", 1,
                                                                           18 * 2**30 - 2**29)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert [g.uuid for g in nvml.visible_gpus()] == [gpu(0)["uuid"], gpu(1)["uuid"]]


def test_no_visible_gpu_means_no_driver_or_cuda_in_the_facts(use, monkeypatch):
    use(fake_pynvml(FOUR))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpu_facts() == {"cuda": None, "gpu": "none", "gpu_count": 0, "gpu_memory_bytes": 0, "driver": None}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,2")
    assert gpu_facts()["gpu_count"] == 2 and gpu_facts()["driver"] == "580.159.04"


SMI_CSV = ("0, GPU-589c5a62-eede-cf93-03f1-c8c713e669dd, NVIDIA H200, 143771, 616, 143156, 580.159.04\n"
           "1, GPU-1111, NVIDIA H200, 143771, [N/A], 143000, 580.159.04\n")
SMI_BANNER = "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n"


def smi(answers: dict):
    """A stand-in for nvml._smi: the first argument picks the answer (None: nvidia-smi failed)."""
    return lambda *args: answers.get(args[0].split("=")[0] if args else "", None)


@pytest.mark.parametrize("module", [None, fake_pynvml([gpu(0)], init_fails=True)], ids=["no pynvml", "NVML fails"])
def test_without_nvml_the_facts_come_from_nvidia_smi(use, monkeypatch, module):
    use(module)  # None in sys.modules: `import pynvml` raises ImportError
    monkeypatch.setattr(nvml, "_smi", smi({"--query-gpu": SMI_CSV, "": SMI_BANNER}))
    host = nvml.read_host()
    assert (host.source, host.driver, host.cuda) == ("nvidia-smi", "580.159.04", "13.0")
    assert [g.uuid for g in host.gpus] == ["GPU-589c5a62-eede-cf93-03f1-c8c713e669dd", "GPU-1111"]
    assert host.gpus[0].total_bytes == (143771 - 616) * 2**20  # MiB: within a MiB of CUDA's, not equal
    assert host.gpus[1].total_bytes == 143771 * 2**20  # [N/A] reserve: nothing taken off
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1111")
    assert guards.visible_gpu_free_bytes() == [143000 * 2**20]


def test_an_old_nvidia_smi_without_the_reserved_field_is_asked_again_without_it(use, monkeypatch):
    use(None)
    old = "0, GPU-0000, NVIDIA H200, 143771, 143156, 535.54.03\n"
    monkeypatch.setattr(nvml, "_smi", lambda *args: old if args and "memory.reserved" not in args[0] else None)
    host = nvml.read_host()
    assert host.gpus[0].total_bytes == 143771 * 2**20 and host.gpus[0].free_bytes == 143156 * 2**20
    assert (host.driver, host.cuda) == ("535.54.03", None)


def test_without_nvml_or_nvidia_smi_there_is_no_gpu(use, monkeypatch):
    use(None)
    monkeypatch.setattr(nvml, "_smi", lambda *args: None)
    assert nvml.read_host() == nvml.GpuHost() and guards.visible_gpu_free_bytes() == []
    assert gpu_facts()["gpu"] == "none"
