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


def env_count_panel(ax, *, xlabel: str, ylabel: str, title: str) -> None:
    """One panel of a sweep over env counts (rlperf env, rlperf noise): a log2 x axis, its labels, a light
    grid, and a legend once a labelled line is drawn."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def save_sweep(fig, title: str, meta: dict, path: str | Path) -> Path:
    """A kernel sweep's figure titled with what ran, over the machine's one-line identity from the run's
    meta, laid out and written (save_png)."""
    fig.suptitle(f"{title}\n{meta.get('device_line', '')}", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)
