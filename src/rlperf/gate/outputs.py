"""Output files of `rlperf gate`: checked before anything is measured, written whole or not at all."""

from __future__ import annotations

import os
import tempfile

from rlperf.errors import UsageError


def check_output_path(path: str | None, flag: str) -> None:
    """A usage error now, rather than a lost run later: not a folder, and its folder is (or can be) writable."""
    if not path:
        return
    full = os.path.abspath(path)
    if os.path.isdir(full):
        raise UsageError(f"{flag} {path!r} is a directory; give a file path")
    _check_creatable(path, full, flag)


def check_output_dir(path: str | None, flag: str) -> None:
    """A folder the gate will create whole (temp folder + rename beside it): absent or empty, and its
    parent writable. A non-empty folder is refused so that one run's files never mix with another's."""
    if not path:
        return
    full = os.path.abspath(path)
    if os.path.exists(full) and not os.path.isdir(full):
        raise UsageError(f"{flag} {path!r} is a file; give a folder that is absent or empty")
    if os.path.isdir(full) and os.listdir(full):
        raise UsageError(f"{flag} {path!r} is not empty; give an absent or empty folder")
    _check_creatable(path, full, flag)


def _check_creatable(path: str, full: str, flag: str) -> None:
    """A probe file in the nearest existing folder (as commands.args.check_writable does): os.access says
    yes to root even where nothing can be created. An existing file is replaced by rename, so its folder
    decides."""
    folder = os.path.dirname(full)
    while not os.path.exists(folder):  # the nearest existing ancestor must let us create the rest
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path!r}: {folder!r} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path!r} is not writable ({folder}: {exc.strerror})") from None


__all__ = ["check_output_dir", "check_output_path"]
