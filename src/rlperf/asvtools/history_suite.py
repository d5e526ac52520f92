"""One suite over many commits: a snapshot of the suite at one ref, run against each commit's `src`.

asv's usual model, chosen for the history (docs/history.md): every stored point carries the same
benchmark code and version, so a step on a line is a change of the measured code, never an edit of the
benchmark; and the suite's explicit `version`s draw the whole range on one line. A benchmark module that
cannot import a commit's `src` (an API the commit predates) is left out of that commit's run with the
import error as its reason, instead of failing asv's discovery of the whole suite.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from rlperf.asvtools.git import git, resolve
from rlperf.errors import InfrastructureError

SUITE_PACKAGE = "benchmarks"


@contextlib.contextmanager
def suite_snapshot(repo: str, ref: str):
    """Yield (sha, folder): `ref`'s committed `benchmarks/` package extracted into a temporary folder, so
    merges landing in the checkout during a long backfill never change the suite halfway."""
    sha = resolve(repo, ref)
    blob = subprocess.run(["git", "-C", repo, "archive", "--format=tar", sha, SUITE_PACKAGE],
                          capture_output=True)
    if blob.returncode != 0:
        raise InfrastructureError(f"cannot read {SUITE_PACKAGE}/ at {ref}: {blob.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="rlperf-suite-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(blob.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        yield sha, os.path.join(tmp, SUITE_PACKAGE)


def suite_modules(suite: str) -> list[str]:
    """The benchmark modules of a suite folder (asv imports every module; helpers start with `_`)."""
    return sorted(f[:-3] for f in os.listdir(suite) if f.endswith(".py") and not f.startswith("_"))


def import_error(suite: str, module: str, pythonpath: str, python: str = sys.executable) -> str | None:
    """None when `module` of the suite imports with `pythonpath` first on the path, else the error's last line.
    The caller's PYTHONPATH stays behind them: a host whose asv_runner comes that way (the GPU host's
    carried wheels) still imports the suite's helpers."""
    paths = [pythonpath, os.path.dirname(suite), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    proc = subprocess.run([python, "-c", f"import {os.path.basename(suite)}.{module}"], env=env,
                          capture_output=True, text=True, cwd=os.path.dirname(suite))
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {proc.returncode}"


def importable_suite(suite: str, pythonpath: str, dest: str) -> tuple[str, dict[str, str]]:
    """Copy into `dest` the suite with only the modules that import against `pythonpath` (a commit's
    overlay); returns (the copy's folder, {left-out module: its import error})."""
    target = os.path.join(dest, os.path.basename(suite))
    shutil.copytree(suite, target)
    dropped = {}
    for module in suite_modules(suite):
        error = import_error(suite, module, pythonpath)
        if error is not None:
            dropped[module] = error
            os.remove(os.path.join(target, module + ".py"))
    return target, dropped


def history_commits(repo: str, branch: str, last: int, paths: list[str]) -> list[str]:
    """The commits a history covers, newest first: the last `last` first-parent commits of `branch`, plus
    every first-parent commit of it that changed one of `paths` (where the measured code moves)."""
    chain = git(repo, "rev-list", "--first-parent", resolve(repo, branch)).split()
    keep = set(chain[:last]) | changed_commits(repo, branch, paths)
    return [sha for sha in chain if sha in keep]


def changed_commits(repo: str, branch: str, paths: list[str]) -> set[str]:
    """The first-parent commits of `branch` that changed one of `paths` (none when no path is given)."""
    if not paths:
        return set()
    return set(git(repo, "rev-list", "--first-parent", resolve(repo, branch), "--", *paths).split())


def subject(repo: str, sha: str) -> str:
    """The commit's one-line subject, for the log."""
    return git(repo, "log", "-1", "--format=%s", sha)


__all__ = ["SUITE_PACKAGE", "changed_commits", "history_commits", "import_error", "importable_suite", "subject", "suite_modules", "suite_snapshot"]
