"""Output files of `rlperf gate`: checked before anything is measured, written whole or not at all."""

from __future__ import annotations

import os
import tempfile

from pathlib import Path

from rlperf.report.jsonio import check_writable


def check_output_path(path: str | None, flag: str) -> None:
    """A usage error now, rather than a lost run later (rlperf.report.jsonio.check_writable)."""
    if path:
        check_writable(Path(path), flag)


def write_text_atomic(path: str, text: str) -> None:
    """Write `text` via a temp file + rename in the same folder (the JSON verdict uses report.jsonio)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["check_output_path", "write_text_atomic"]
