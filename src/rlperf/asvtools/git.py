"""The few git operations the per-commit flow needs; every failure is an InfrastructureError."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile

from rlperf.gate.exitcodes import InfrastructureError


def git(repo: str, *args: str) -> str:
    """Run git in `repo`, returning stripped stdout."""
    try:
        out = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise InfrastructureError(f"cannot run git: {exc}") from exc
    if out.returncode != 0:
        raise InfrastructureError(f"git {' '.join(args)} failed in {repo}: {out.stderr.strip()}")
    return out.stdout.strip()


def resolve(repo: str, ref: str) -> str:
    """The full SHA of `ref`, or an InfrastructureError naming the unknown ref."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except InfrastructureError:
        raise InfrastructureError(f"unknown commit {ref!r} in {repo} (fetch it first?)") from None


def toplevel(path: str = ".") -> str:
    return git(path, "rev-parse", "--show-toplevel")


def commits_in_range(repo: str, spec: str) -> list[str]:
    """`A..B` -> the first-parent commits after A up to B, oldest first."""
    if ".." not in spec:
        raise InfrastructureError(f"range {spec!r} is not of the form A..B")
    a, b = spec.split("..", 1)
    a, b = resolve(repo, a or "HEAD"), resolve(repo, b or "HEAD")
    out = git(repo, "rev-list", "--first-parent", "--reverse", f"{a}..{b}")
    return out.split() if out else []


def first_parent_history(repo: str, ref: str) -> list[str]:
    """Commits of `ref` along first parents, newest first."""
    out = git(repo, "rev-list", "--first-parent", resolve(repo, ref))
    return out.split() if out else []


@contextlib.contextmanager
def worktree(repo: str, sha: str):
    """A detached, throw-away git worktree of `sha` (the benchmarks and package of that commit)."""
    path = tempfile.mkdtemp(prefix=f"rlperf-wt-{sha[:8]}-")
    shutil.rmtree(path)
    git(repo, "worktree", "add", "--detach", "--force", path, sha)
    try:
        yield path
    finally:
        with contextlib.suppress(InfrastructureError):
            git(repo, "worktree", "remove", "--force", path)
        shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(InfrastructureError):
            git(repo, "worktree", "prune")


__all__ = ["commits_in_range", "first_parent_history", "git", "resolve", "toplevel", "worktree"]
