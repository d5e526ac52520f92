"""The machine figures the plan models with: bandwidth ceilings and free memory, from a run or measured now.

A `rlperf replay` result stores the ceilings it measured (`ceilings`) and the machine's RAM at start
(`machine`), but not the free device memory; the plan then uses the GPU's total memory and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlperf.errors import UsageError

REPLAY_SCHEMA, REPLAY_VERSIONS = "rlperf.replay", (1,)


@dataclass(frozen=True)
class MachineCeilings:
    """Bytes/s ceilings (None where the machine has no GPU) and free memory, with where they came from."""

    machine: str
    source: str
    host_copy_Bps: float
    h2d_Bps: float | None
    d2d_Bps: float | None
    host_free_bytes: int
    device_free_bytes: int
    gpu_count: int
    notes: tuple[str, ...] = ()

    @property
    def cuda(self) -> bool:
        return self.gpu_count > 0


def from_results(doc: dict, source: str) -> MachineCeilings:
    """Ceilings of a `rlperf replay` result document; a UsageError when it lacks them."""
    ceil, machine = doc.get("ceilings") or {}, doc.get("machine") or {}
    if "host_copy_Bps" not in ceil:
        raise UsageError(f"{source}: the run recorded no ceilings (it was made with --no-ceilings); "
                         f"run `rlperf replay` again without it, or use `rlperf plan --measure`")
    gpus = int(machine.get("gpu_count") or 0)
    notes = ["host free = RAM available when the run started"]
    if gpus:
        notes.append(f"free device memory not recorded by the run: using the GPU's total "
                     f"{machine.get('gpu_memory_bytes', 0) / 2**30:.1f} GiB")
    return MachineCeilings(
        machine=str(machine.get("name", "unknown")), source=source,
        host_copy_Bps=float(ceil["host_copy_Bps"]), h2d_Bps=ceil.get("h2d_pinned_Bps"), d2d_Bps=ceil.get("d2d_Bps"),
        host_free_bytes=int(machine.get("ram_available_bytes_at_start") or machine.get("ram_bytes") or 0),
        device_free_bytes=int(machine.get("gpu_memory_bytes") or 0), gpu_count=gpus, notes=tuple(notes))


def load_results(path: str | Path) -> dict:
    """A `rlperf replay` results JSON, or a UsageError naming what is wrong with it."""
    from rlperf.report.jsonio import read_json

    return read_json(path, schema=REPLAY_SCHEMA, versions=REPLAY_VERSIONS)


def results_for_machine(results_dir: str | Path, machine: str) -> Path:
    """`<results_dir>/<machine>/results.json`; a UsageError listing the machines that have one."""
    root = Path(results_dir)
    path = root / machine / "results.json"
    if path.is_file():
        return path
    known = sorted(p.parent.name for p in root.glob("*/results.json")) if root.is_dir() else []
    raise UsageError(f"no replay results for machine {machine!r} under {root}; valid: "
                     f"{', '.join(known) or '(none)'}; or pass --results PATH, or --measure to measure now")


def measure_now() -> MachineCeilings:
    """Measure the ceilings and free memory of this machine (imports torch; seconds, 1 GiB buffers)."""
    from rlperf.measure.ceilings import measure_ceilings
    from rlperf.measure.machine import machine_name
    from rlperf.replay.cases import Resources, default_torch_threads
    from rlperf.replay.run import learner_device

    res = Resources.probe()
    ceil = measure_ceilings(learner_device(), threads=default_torch_threads(1))
    return MachineCeilings(
        machine=machine_name(), source="measured now", host_copy_Bps=float(ceil["host_copy_Bps"]),
        h2d_Bps=ceil.get("h2d_pinned_Bps"), d2d_Bps=ceil.get("d2d_Bps"), host_free_bytes=res.host_available_bytes,
        device_free_bytes=res.device_free_bytes, gpu_count=res.cuda_devices)


def superseded_note(results_path: str | Path) -> str | None:
    """Why the report folder of `results_path` is marked superseded (its SUPERSEDED.md), or None: a plan
    modelled on replaced ceilings must say so."""
    from rlperf.report.summary import superseded_note as note

    return note(Path(results_path).parent)
