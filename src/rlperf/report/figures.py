"""What every report chart shares: a headless pyplot, and an atomic PNG write (a temp file renamed into
place, like the JSON beside it), so an interrupted run never leaves a half-written chart."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed), imported only when a chart is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | Path, **savefig) -> Path:
    """Write `fig` to `path` at dpi 150 (plus any savefig options) whole or not at all, then close it
    (rlperf.atomic.save_figure: temp file, umask mode, rename)."""
    from rlperf.atomic import save_figure

    pyplot()  # the headless backend before anything draws
    return save_figure(fig, path, dpi=150, **savefig)


def label_points(ax, points) -> None:
    """Write each (x, y, text) just above its point, small: e.g. the thread count behind a value."""
    for x, y, text in points:
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
