"""Where `make bench` stores its results: a git-ignored local folder, or the committed history on request.

The automatic machine name (`cpu-2vcpu-amd-epyc`) is the same on every host of a cloud pool, so a
run on a new box would add a file to, and rewrite the machine.json of, a committed folder measured on
another host. By default the results therefore go to `.asv/results/` (git-ignored); `--record` writes
into `results/asv/` and refuses, before measuring, a committed machine folder whose host facts (its
newest fingerprint's static part, else its machine.json) differ from this host's.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

from rlperf.errors import UsageError

LOCAL_RESULTS, LOCAL_HTML = os.path.join(".asv", "results"), "html"
RECORD_RESULTS = os.path.join("results", "asv")
# machine.json keys that describe the host (asv's machine fields and rlperf's facets; not package versions)
HOST_KEYS = ("arch", "cpu", "cpu_flags", "num_cpu", "ram", "gpu", "gpu_count", "gpu_memory", "driver", "os")
UNRECORDED = "unrecorded"


@dataclass(frozen=True)
class Target:
    results_dir: str  # relative to the repository root
    html_dir: str
    local: bool

    def describe(self, machine: str) -> str:
        where = os.path.join(self.results_dir, machine) + "/"
        if self.local:
            return f"{where} (local, git-ignored; --record / RECORD=1 stores into {RECORD_RESULTS}/)"
        return f"{where} (the committed history: commit it with a PROVENANCE.md)"


def committed_files(repo: str, folder: str) -> list[str]:
    """Files of `folder` tracked by git (empty outside a git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "--", folder], cwd=repo, capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    return out.stdout.split() if out.returncode == 0 else []


def _facts_differ(stored: dict, here: dict, keys) -> list[str]:
    out = []
    for key in keys:
        a, b = stored.get(key), here.get(key)
        if a is None or UNRECORDED in (str(a), str(b)):
            continue  # not recorded on the stored side: neither matches nor contradicts
        if str(a) != str(b):
            out.append(f"{key}: stored {a!r}, this host {b!r}")
    return out


def host_differences(results_dir: str, machine: str) -> list[str]:
    """How this host differs from the one `results_dir/machine` was measured on ([] when it is the same).

    The newest fingerprint's static facts when the folder has one (what `rlperf gate --backfill` checks),
    else the host keys of its machine.json; a folder with neither cannot be matched and counts as foreign."""
    from rlperf.asvtools import fingerprint
    from rlperf.asvtools.machine_file import machine_entry

    newest = fingerprint.newest(results_dir, machine)
    if newest and newest.get("static"):
        stored = newest["static"]
        return _facts_differ(stored, fingerprint.static_facts(), sorted(stored))
    path = os.path.join(results_dir, machine, "machine.json")
    try:
        with open(path) as fh:
            stored = json.load(fh)
    except (OSError, ValueError):
        return [f"no fingerprint and no readable {path}: the host it was measured on is unknown"]
    return _facts_differ(stored, machine_entry(name=machine), HOST_KEYS)


def choose(repo: str, machine: str, record: bool) -> Target:
    """The local target, or (record) results/asv after the guard; a foreign committed folder is a UsageError."""
    if not record:
        return Target(LOCAL_RESULTS, LOCAL_HTML, local=True)
    results_dir = os.path.join(repo, RECORD_RESULTS)
    folder = os.path.join(RECORD_RESULTS, machine)
    if committed_files(repo, folder):
        diffs = host_differences(results_dir, machine)
        if diffs:
            raise UsageError(
                f"{folder}/ is committed history from another host ({'; '.join(diffs)}); recording into it "
                f"would mix two hosts in one series. Record under a name of your own (make bench RECORD=1 "
                f"MACHINE=my-box), or run without RECORD to store locally in {LOCAL_RESULTS}/")
    return Target(RECORD_RESULTS, LOCAL_HTML, local=False)


__all__ = ["HOST_KEYS", "LOCAL_HTML", "LOCAL_RESULTS", "RECORD_RESULTS", "Target", "choose", "committed_files",
           "host_differences"]
