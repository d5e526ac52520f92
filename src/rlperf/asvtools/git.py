"""The few git operations the per-commit flow needs; every failure is an InfrastructureError."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile

from rlperf.errors import InfrastructureError


# Folders the tools write into: a change there is an output, not code under test (uncommitted_paths).
OUTPUT_FOLDERS = ("results/", "out/", "html/", ".asv/")


def git(repo: str, *args: str, strip: bool = True) -> str:
    """Run git in `repo`, returning its stdout (stripped unless strip is False)."""
    try:
        out = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise InfrastructureError(f"cannot run git: {exc}") from exc
    if out.returncode != 0:
        raise InfrastructureError(f"git {' '.join(args)} failed in {repo}: {out.stderr.strip()}")
    return out.stdout.strip() if strip else out.stdout


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


def uncommitted_paths(repo: str) -> list[str]:
    """Paths (relative to the repository root) whose working-tree state differs from HEAD: modified,
    staged, deleted, renamed (both names) and untracked files that git does not ignore, outside
    OUTPUT_FOLDERS. What `--head HEAD` would leave out of a measurement of the commit."""
    out = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", strip=False)
    tokens, paths = out.split("\0"), set()
    index = 0
    while index < len(tokens):
        entry = tokens[index]
        index += 1
        if len(entry) < 4:
            continue
        paths.add(entry[3:])
        if entry[0] in "RC":  # a rename or copy: the next token is the original name
            paths.add(tokens[index])
            index += 1
    return sorted(p for p in paths if not p.startswith(OUTPUT_FOLDERS))


def overlay_uncommitted(repo: str, target: str, paths: list[str]) -> None:
    """Make `target` (a worktree of HEAD) hold the repository's working-tree state of `paths`: copy
    each file that exists, remove each that does not (deleted or renamed away)."""
    for rel in paths:
        src, dst = os.path.join(repo, rel), os.path.join(target, rel)
        if os.path.islink(src) or os.path.isfile(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst) and not os.path.isdir(dst):
                os.remove(dst)
            shutil.copy2(src, dst, follow_symlinks=False)
        elif not os.path.exists(src) and (os.path.islink(dst) or os.path.isfile(dst)):
            os.remove(dst)


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


__all__ = ["OUTPUT_FOLDERS", "commits_in_range", "first_parent_history", "git", "overlay_uncommitted", "resolve",
           "toplevel", "uncommitted_paths", "worktree"]
