"""The one place report files are written: whole or not at all, with the user's umask, in a fixed order.

Every writer goes through a temp file in the target folder and a rename, so a crash or Ctrl-C never
leaves half a file. mkstemp creates 0600 files; `_publish` sets `0o666 & ~umask` before the rename, as
`open()` would have. A `Staging` collects a run's reports (charts, markdown, JSON) in a private folder
next to each target and moves them into place together, JSON last, under a lock on the target folders
and with Ctrl-C held back: an interrupted run changes nothing, and two runs to one path never mix
their files.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

STAGE_PREFIX = ".rlperf-stage-"
# A half-written file never carries its target's suffix: asv lists results by *.json, a killed writer's
# leftover must not read as one (savefig alone needs the real suffix to pick its format).
TEMP_SUFFIX = ".tmp"


def file_mode() -> int:
    """The mode `open(path, 'w')` would give a new file under the current umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _publish(tmp: str | Path, path: Path) -> None:
    os.chmod(tmp, file_mode())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = ""):
    """Yield a temp path next to `path` for a writer that wants a file name (savefig, a trace export);
    on success it becomes `path` (umask mode), on any exception it is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        _publish(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes) -> Path:
    with atomic_path(path, suffix=TEMP_SUFFIX) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    with atomic_path(path, suffix=TEMP_SUFFIX) as tmp:
        tmp.write_text(text)
    return Path(path)


def write_json(path: str | Path, doc: dict) -> Path:
    with atomic_path(path, suffix=TEMP_SUFFIX) as tmp:
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=2, sort_keys=False, default=_jsonable)
            fh.write("\n")
    return Path(path)


def create_json(path: str | Path, doc: dict) -> Path:
    """Write `doc` to a NEW file `path`, whole or not at all: FileExistsError when `path` exists, which is
    never replaced (a log of one file per record: a writer that raced another loses nothing of either)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(doc, fh, indent=2, sort_keys=False, default=_jsonable)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())
        os.link(tmp, path)  # atomic, and refuses an existing name where os.replace would overwrite it
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def save_figure(fig, path: str | Path, **savefig_kw) -> Path:
    """matplotlib `fig.savefig` into a temp file, then the rename; the figure is closed either way."""
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path, suffix=Path(path).suffix or ".png") as tmp:
            fig.savefig(tmp, **savefig_kw)
    finally:
        plt.close(fig)
    return Path(path)


def replace_dir(src: str | Path, dst: str | Path) -> Path:
    """Move folder `src` to `dst` (same file system), replacing an existing `dst` folder; the old one is
    renamed aside first and removed only after the new one is in place."""
    src, dst = Path(src), Path(dst)
    old = None
    if dst.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dst.name}.old-", dir=dst.parent))
        os.replace(dst, old / dst.name)
    os.replace(src, dst)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return dst


def _jsonable(obj):
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


@contextlib.contextmanager
def folder_lock(*folders: Path):
    """An exclusive flock on each folder (sorted, so two runs never deadlock); held while a run's files
    move into place so a second run to the same folder waits instead of interleaving."""
    fds = []
    try:
        for folder in sorted({Path(f).resolve() for f in folders}):
            fd = os.open(folder, os.O_RDONLY)
            fds.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(fds):
            os.close(fd)  # closing releases the lock


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT/SIGTERM until the block ends (only the main thread may change the mask usefully)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Staging:
    """A run's outputs, written under private names and published together.

        with Staging() as stage:
            write_text(stage.path(report), text)          # any writer, any number of files
            write_charts(doc, stage.folder(plot_dir))     # or a whole folder of them
            write_json(stage.path(out_json), doc)
            stage.publish(last=[out_json])
    Leaving the block without `publish` (an error, Ctrl-C) removes the staged files: nothing changed.
    """

    def __init__(self) -> None:
        self._dirs: dict[Path, Path] = {}  # target folder -> its staging folder

    def folder(self, target: str | Path) -> Path:
        """The staging folder whose files will land in `target` (created, with `target`, on first use)."""
        target = Path(target)
        if target not in self._dirs:
            target.mkdir(parents=True, exist_ok=True)
            self._dirs[target] = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=target))
        return self._dirs[target]

    def path(self, final: str | Path) -> Path:
        """Where to write the file that will become `final`."""
        final = Path(final)
        return self.folder(final.parent) / final.name

    def publish(self, last: list[str | Path] = ()) -> list[Path]:
        """Move every staged file to its target, `last` ones after all others (the JSON that names the
        rest), under the folder lock and with Ctrl-C held back while the renames run; returns the targets."""
        last = [Path(p) for p in last]
        moves = [(staged, target / staged.name) for target, sdir in sorted(self._dirs.items())
                 for staged in sorted(sdir.iterdir()) if staged.is_file()]
        moves.sort(key=lambda m: m[1] in last)
        with folder_lock(*self._dirs), _signals_held():  # waiting for the lock stays interruptible
            for staged, final in moves:
                _publish(staged, final)
        self.discard()
        return [final for _staged, final in moves]

    def discard(self) -> None:
        for sdir in self._dirs.values():
            shutil.rmtree(sdir, ignore_errors=True)
        self._dirs.clear()

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()
