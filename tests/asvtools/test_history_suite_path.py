"""history_suite.import_error keeps the caller's PYTHONPATH behind the commit's code: on the GPU host
asv_runner (which the suite's helpers import) comes from carried wheels on PYTHONPATH, and a check that
dropped it left every module out of every commit."""

from __future__ import annotations

from rlperf.asvtools.history_suite import import_error


def test_a_module_imports_a_dependency_found_only_on_the_callers_pythonpath(tmp_path, monkeypatch):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "bench_x.py").write_text("import only_on_pythonpath\n")
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "only_on_pythonpath.py").write_text("")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert "No module named 'only_on_pythonpath'" in import_error(str(tmp_path / "suite"), "bench_x", str(tmp_path / "src"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "deps"))
    assert import_error(str(tmp_path / "suite"), "bench_x", str(tmp_path / "src")) is None
