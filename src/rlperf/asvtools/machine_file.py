"""asv's machine file, written directly so GPU, driver, CUDA, torch and numba become site facets.

`asv machine --yes` stores only asv's six fields; asv keeps any extra key of the machine file in
`results/<machine>/machine.json` and copies it into every result's params, which `asv publish`
turns into graph facets. asv only reads `~/.asv-machine.json` (it follows $HOME), so that is where
the entry goes unless a path is given.
"""

from __future__ import annotations

from asv.machine import MachineCollection

from rlperf.measure.machine import machine_identity, machine_name

# identity key -> machine-file key; volatile facts (available RAM at start) are left out on purpose,
# since any value that changes between runs splits the site's graphs into separate lines.
_FACETS = {
    "cpu_flags": "cpu_flags",  # a different CPU under the same model string starts its own series
    "gpu": "gpu",
    "gpu_count": "gpu_count",
    "gpu_memory_bytes": "gpu_memory",
    "driver": "driver",
    "cuda": "cuda",
    "torch": "torch",
    "numba": "numba",
    "numpy": "numpy",
}


def _text(value) -> str:
    return "none" if value is None else str(value)


def machine_entry(ident: dict | None = None, name: str | None = None) -> dict[str, str]:
    """asv's fields (machine, os, arch, cpu, num_cpu, ram) plus the rlperf facets, all strings."""
    ident = ident or machine_identity()
    entry = {
        "machine": name or machine_name(ident),
        "os": ident["os"],
        "arch": ident["arch"],
        "cpu": ident["cpu"],
        "num_cpu": _text(ident["num_cpu"]),
        "ram": _text(ident["ram_bytes"]),
    }
    entry.update({dst: _text(ident.get(src)) for src, dst in _FACETS.items()})
    return entry


def machine_file_path() -> str:
    """The file asv reads: ~/.asv-machine.json under the current $HOME."""
    return MachineCollection.get_machine_file_path()


def check_machine_file(path: str) -> None:
    """A machine file that exists must be asv's JSON object; anything else is a UsageError naming the
    file and the fix, so a user's file is never overwritten or half-merged."""
    import json
    from pathlib import Path

    from rlperf.errors import UsageError

    file = Path(path)
    if not file.exists():
        return
    try:
        doc = json.loads(file.read_text())
        problem = None if isinstance(doc, dict) else f"a JSON {type(doc).__name__}, not an object"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"unreadable ({exc})"
    if problem is None and not all(isinstance(v, dict) for k, v in doc.items() if k != "version"):
        problem = "an entry that is not an object"
    if problem:
        raise UsageError(f"asv machine file {file} is {problem}; it was left untouched. Fix it, or move it "
                         f"aside (mv {file} {file}.bak) and re-run `rlperf machine --write`")


def write_machine_file(name: str | None = None, ident: dict | None = None,
                       path: str | None = None) -> tuple[dict, str]:
    """Add or replace this machine's entry (other machines' entries are kept); returns (entry, path)."""
    entry = machine_entry(ident, name)
    path = path or machine_file_path()
    check_machine_file(path)
    MachineCollection.save(entry["machine"], entry, _path=path)
    return entry, path


__all__ = ["check_machine_file", "machine_entry", "machine_file_path", "write_machine_file"]
