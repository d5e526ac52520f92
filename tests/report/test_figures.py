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


def test_an_env_count_panel_has_a_log2_axis_and_a_legend_only_for_labelled_lines(tmp_path):
    from rlperf.report.figures import env_count_panel, save_sweep

    plt = pyplot()
    fig, (bare, labelled) = plt.subplots(1, 2)
    bare.axhline(1.0)  # a reference line alone asks for no legend
    labelled.plot([512, 1024], [1, 2], label="walk, 2t")
    labelled.axhline(1.0)
    for ax in (bare, labelled):
        env_count_panel(ax, xlabel="num_envs", ylabel="speedup", title="t")
    assert bare.get_xscale() == labelled.get_xscale() == "log" and labelled.xaxis.get_transform().base == 2
    assert bare.get_legend() is None
    assert [t.get_text() for t in labelled.get_legend().get_texts()] == ["walk, 2t"]
    assert fig._suptitle is None
    save_sweep(fig, "sweep (omp)", {"device_line": "box, 2 cores"}, tmp_path / "s.png")
    assert fig._suptitle.get_text() == "sweep (omp)\nbox, 2 cores" and (tmp_path / "s.png").exists()
