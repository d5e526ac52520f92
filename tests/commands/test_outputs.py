"""commands.outputs: the reports-and-JSON flow env, noise, replay and e2e share."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from rlperf.commands import outputs
from rlperf.errors import UsageError

SHAPE = {"meta": dict, "results": list}


def _saved(tmp_path, **doc):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"schema": "rlperf.test", "schema_version": 1, **doc}))
    return path


@pytest.mark.parametrize("doc, message", [
    ({"meta": {}}, "missing key 'results'"),
    ({"meta": {}, "results": {}}, "'results' is a dict, not a list"),
    ({"meta": [], "results": []}, "'meta' is a list, not a dict"),
])
def test_read_saved_names_the_key_a_renderer_would_trip_on(tmp_path, doc, message):
    with pytest.raises(UsageError, match=message):
        outputs.read_saved(_saved(tmp_path, **doc), "rlperf.test", 1, SHAPE)


def test_publish_writes_reports_and_json_together_and_nothing_when_a_report_fails(tmp_path):
    out = tmp_path / "run" / "results.json"
    published = outputs.publish({"a": 1}, out.parent, lambda folder: (folder / "report.md").write_text("r"), out)
    assert published[-1] == out  # the JSON that names the reports comes last
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.md", "results.json"]

    def broken(folder):
        (folder / "report.md").write_text("new")
        raise KeyError("row")

    with pytest.raises(KeyError):
        outputs.publish({"a": 2}, out.parent, broken, out)
    assert (out.parent / "report.md").read_text() == "r" and json.loads(out.read_text()) == {"a": 1}
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.md", "results.json"]  # no staging left


def test_replot_turns_malformed_rows_into_exit_2_and_writes_nothing(tmp_path):
    saved = _saved(tmp_path, meta={}, results=[{"no": "value"}])
    args = Namespace(plot_only=str(saved), plot_dir=str(tmp_path / "plots"), overwrite_tracked=False)

    def reports(doc, folder):
        (folder / "chart.png").write_bytes(b"x")
        return [r["value"] for r in doc["results"]]

    with pytest.raises(UsageError, match="malformed rows"):
        outputs.replot(args, "test", schema="rlperf.test", version=1, shape=SHAPE, reports=reports)
    assert not any((tmp_path / "plots").iterdir())


def test_measure_or_replot_measures_once_and_writes_beside_the_json(tmp_path):
    out = tmp_path / "r" / "results.json"
    calls = []

    def measure():
        calls.append(1)
        return {"results": []}, out

    args = Namespace(plot_only=None)
    doc, written, folder = outputs.measure_or_replot(args, "test", schema="rlperf.test", version=1, shape=SHAPE,
                                                     reports=lambda d, f: (f / "chart.png").write_bytes(b"x"),
                                                     measure=measure)
    assert calls == [1] and written == out and folder == out.parent
    assert sorted(p.name for p in folder.iterdir()) == ["chart.png", "results.json"]


def test_finish_lists_the_published_reports_and_exits_1_when_nothing_ran(tmp_path, capsys):
    out, plots = tmp_path / "results.json", tmp_path / "plots"
    doc = {"results": [], "skipped": [{"reason": "no GPU"}]}
    code = outputs.finish(doc, out, plots, lambda d, f: [(f / "a.png"), (f / "a.png").write_bytes(b"x")][:1],
                          rows="results", noun="case")
    assert code == 1
    assert doc["plots"] == [str(plots / "a.png")] == json.loads(out.read_text())["plots"]
    captured = capsys.readouterr()
    assert "(0 cases measured, 1 skipped)" in captured.out and "no case could run" in captured.err
    doc = {"results": [{}], "skipped": []}
    assert outputs.finish(doc, out, plots, lambda d, f: [], rows="results", noun="case") == 0
