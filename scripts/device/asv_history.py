"""Device step: benchmark several commits of main in one lease, oldest first, into results/asv.

    python3 scripts/device/asv_history.py --repo /tmp/asvrepo --machine NAME --bench REGEX SHA [SHA ...]

Each commit runs through the gate's own per-commit path (worktree + overlay install + `asv run
--python=same` in a scratch folder, merged into the results folder with the session's host fingerprint
by rlperf.asvtools.store), so the H200 history is made the way the nightly makes it. Where the image
cannot build the package (no setuptools), the worktree's `src/` is put on ASV_PYTHONPATH instead and
the fallback is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rlperf.asvtools import git
from rlperf.asvtools.run_commit import PreparedCommit, run_commit, run_into_store
from rlperf.gate.exitcodes import InfrastructureError


def run_from_source(repo: str, sha: str, **kw) -> int:
    """The commit's sources on the path instead of an installed overlay."""
    with git.worktree(repo, sha) as wt:
        env = dict(os.environ)
        env["ASV_PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(wt, "src"), env.get("ASV_PYTHONPATH")) if p)
        return run_into_store(PreparedCommit(sha=sha, worktree=wt, env=env), **kw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--results-dir", default=os.path.abspath("results/asv"))
    ap.add_argument("shas", nargs="+")
    args = ap.parse_args()
    kw = dict(machine=args.machine, results_dir=args.results_dir, fallback_conf=os.path.abspath("asv.conf.json"),
              bench=args.bench)
    for ref in args.shas:
        sha, start = git.resolve(args.repo, ref), time.time()
        try:
            status = run_commit(args.repo, sha, **kw)
        except InfrastructureError as exc:
            if "installing" not in str(exc):
                raise
            print(f"asv_history: overlay install failed for {sha[:12]}, running from its src/: {exc}", flush=True)
            status = run_from_source(args.repo, sha, **kw)
        print(f"asv_history: {sha[:12]} asv exit {status} in {time.time() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
