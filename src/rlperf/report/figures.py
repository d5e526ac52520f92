"""What every report chart shares: a headless pyplot, and an atomic PNG write (a temp file renamed into
place, like the JSON beside it), so an interrupted run never leaves a half-written chart."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed), imported only when a chart is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | Path, **savefig) -> Path:
    """Write `fig` to `path` at dpi 150 (plus any savefig options) atomically, then close it."""
    plt = pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=150, **savefig)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        Path(tmp).unlink(missing_ok=True)
    return path


def label_points(ax, points) -> None:
    """Write each (x, y, text) just above its point, small: e.g. the thread count behind a value."""
    for x, y, text in points:
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
