"""report.figures: a chart is written whole or not at all (an older chart stays as it was)."""

import pytest

from rlperf.report.figures import pyplot, save_png


def test_a_chart_is_written_whole_and_a_failed_write_keeps_the_old_one(tmp_path):
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    path = save_png(fig, tmp_path / "sub" / "c.png")
    good = path.read_bytes()
    assert good.startswith(b"\x89PNG")

    def half_then_fail(tmp, **kw):
        open(tmp, "wb").write(b"half")
        raise OSError("disk full")

    broken = plt.figure()
    broken.savefig = half_then_fail
    with pytest.raises(OSError, match="disk full"):
        save_png(broken, path)
    assert path.read_bytes() == good and sorted(p.name for p in path.parent.iterdir()) == ["c.png"]
