"""Give results stored before the `cpu_flags` facet existed the value their host really had.

asv keys a site series by every param of a result, so `cpu_flags` (rlperf.asvtools.machine_file)
starts a new series when the CPU changes under an unchanged model string. Results written before the
facet existed lack the key, and asv would draw them apart from the newer ones for that reason alone.
This fills the key in from the record the gate kept of the same commit, its fingerprint sidecar
(`static.cpu_flags_sha256`), or with `unrecorded` where there is none: a value that is not known is
said so, never guessed. The gate compares neither (gate.host). Each file keeps its own JSON layout
byte for byte apart from the one key, and a file whose layout cannot be reproduced is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from rlperf.asvtools import fingerprint
from rlperf.asvtools.json_layout import layout_of
from rlperf.asvtools.stored import UNRECORDED
from rlperf.errors import InfrastructureError
from rlperf.atomic import write_text

KEY = "cpu_flags"
MACHINE_FILE = "machine.json"


@dataclass(frozen=True)
class Stamp:
    path: str
    value: str  # what the file's params now say
    source: str  # where the value came from: a fingerprint file, "none stored", or "already set"


def _with_key(params: dict, value: str) -> dict:
    """params with KEY right after `cpu` (where a reader looks for it); order means nothing to asv."""
    out = {}
    for key, item in params.items():
        out[key] = item
        if key == "cpu":
            out[KEY] = value
    out.setdefault(KEY, value)
    return out


def _value_for(results_dir: str, machine: str, sha: str) -> tuple[str, str]:
    doc = fingerprint.load(results_dir, machine, sha)
    value = ((doc or {}).get("static") or {}).get("cpu_flags_sha256")
    if not value:
        return UNRECORDED, "none stored"
    return str(value), os.path.relpath(fingerprint.sidecar_path(results_dir, machine, sha), results_dir)


def _stamp_file(path: str, value_for, params_key: str | None, write: bool) -> Stamp:
    """Set KEY in one file's params (a result's `params`, or machine.json's entry) unless it is set."""
    try:
        with open(path) as fh:
            text = fh.read()
        doc = json.loads(text)
        params = doc[params_key] if params_key else doc
        if not isinstance(params, dict):
            raise InfrastructureError(f"{params_key or 'the file'} is not a JSON object")
        if KEY in params:
            return Stamp(path, str(params[KEY]), "already set")
        layout = layout_of(text, doc)
        value, source = value_for(doc)
        new = _with_key(params, value)
        if params_key:
            doc[params_key] = new
        else:
            doc = new
        if write:
            write_text(path, json.dumps(doc, **layout) + ("\n" if text.endswith("\n") else ""))
        return Stamp(path, value, source)
    except InfrastructureError as exc:
        raise InfrastructureError(f"{path}: {exc}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfrastructureError(f"{path}: not a readable asv file ({exc})") from None


def stamp_machine(results_dir: str, machine: str, write: bool = True) -> list[Stamp]:
    """Stamp every result of `machine` from its own commit's fingerprint, then machine.json from the
    newest fingerprint (the host the history was last measured on). write=False: report only.
    Every file is checked before any is written, so a bad one leaves the folder as it was."""
    stamps = _stamp_all(results_dir, machine, write=False)
    return _stamp_all(results_dir, machine, write=True) if write else stamps


def _stamp_all(results_dir: str, machine: str, write: bool) -> list[Stamp]:
    folder = os.path.join(results_dir, machine)
    if not os.path.isdir(folder):
        raise InfrastructureError(f"no results folder {folder}")
    stamps = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json") and name != MACHINE_FILE:
            stamps.append(_stamp_file(os.path.join(folder, name),
                                      lambda doc: _value_for(results_dir, machine, str(doc["commit_hash"])),
                                      "params", write))
    if os.path.isfile(os.path.join(folder, MACHINE_FILE)):
        newest = fingerprint.newest(results_dir, machine)
        value = ((newest or {}).get("static") or {}).get("cpu_flags_sha256") or UNRECORDED
        source = "newest fingerprint" if newest else "none stored"
        stamps.append(_stamp_file(os.path.join(folder, MACHINE_FILE), lambda doc: (value, source), None, write))
    return stamps


__all__ = ["KEY", "Stamp", "stamp_machine"]
