"""What asv's results folder holds for a commit, without loading it: asvtools' view of stored results.

It lives below the gate (the gate's loader, rlperf.gate.results, imports these), so asvtools can ask
"is this commit measured?" and read host params without importing the gate.
"""

from __future__ import annotations

import json
import os

from rlperf.errors import InfrastructureError

# Result params that describe the host (asv's machine fields and rlperf's host facets). Everything
# else in a result's params (python, torch, numba, numpy, cuda, requirements) is the Python identity.
HOST_KEYS = ("machine", "os", "arch", "cpu", "cpu_flags", "num_cpu", "ram", "gpu", "gpu_count", "gpu_memory",
             "driver")
# The value of a host param that a result was stored without (scripts/stamp_host_facet.py): not known,
# so it neither matches nor contradicts the other side.
UNRECORDED = "unrecorded"


def result_files(results_dir: str, machine: str, sha: str) -> list[str]:
    """The result files of `sha` (by its 8-character prefix) stored for `machine`, sorted."""
    folder = os.path.join(results_dir, machine)
    if not os.path.isdir(folder):
        return []
    prefix = sha[:8] + "-"
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if f.startswith(prefix) and f.endswith(".json"))


def has_results(results_dir: str, machine: str, sha: str) -> bool:
    """Whether any result file of `sha` exists for `machine` (what decides --run in auto mode)."""
    return bool(result_files(results_dir, machine, sha))


__all__ = ["HOST_KEYS", "UNRECORDED", "has_results", "result_files"]


def read_json_object(path: str, what: str = "") -> dict:
    """A JSON file holding one object (an asv result, a benchmarks.json), or an InfrastructureError naming
    the file and what is wrong: the one reader the store and the gate's loader share."""
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"unreadable {what + ' ' if what else ''}{path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise InfrastructureError(f"malformed {path}: expected an object{' of ' + what if what else ''}")
    return doc
