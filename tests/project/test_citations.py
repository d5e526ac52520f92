"""scripts/rewrite_citations.py: every citation in the repository resolves, and the rewrite is exact."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "rewrite_citations.py"
# Spelled in pieces so this file holds no citation of its own for the repository check to read.
W, L, LP = "workloads" + ".md", "limits", "limits-and-practices"
DW, DL = "docs/" + W, "docs/limits" + ".md"


@pytest.fixture(scope="module")
def rc():
    spec = importlib.util.spec_from_file_location("rewrite_citations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_every_citation_in_the_repository_names_an_existing_section():
    out = _run("--check", "--root", str(ROOT))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every cited section exists" in out.stdout


def test_rewrite_gives_the_short_form_on_the_projects_pages(rc):
    src = (f"A ({W} C3, C5) and ({W} A3/A4)\n"
           f"# floors ({LP}.md 1.2-1.4), layouts ({LP}.md\n1.2), kernel ({LP}.md section 3)\n"
           f"x = 1  # {L} §3.8: bytes; threads (§3.2); ranks ({LP} 2.7, 4.2 rule 7)\n")
    want = ("A (docs/workloads.md C3, C5) and (docs/workloads.md A3/A4)\n"
            "# floors (docs/limits.md 1.2-1.4), layouts (docs/limits.md\n1.2), kernel (docs/limits.md 3)\n"
            "x = 1  # docs/limits.md 3.8: bytes; threads (docs/limits.md 3.2); ranks (docs/limits.md 2.7, 4.2 rule 7)\n")
    assert rc.rewrite(src) == want
    assert rc.rewrite(want) == want  # idempotent
    cits = rc.find_citations("x.py", src)
    assert [c.codes for c in cits] == [("C3", "C5"), ("A3", "A4"), ("1.2", "1.3", "1.4"), ("1.2",), ("3",),
                                       ("3.8",), ("3.2",), ("2.7", "4.2")]
    assert cits[-1].rule == 7 and cits[3].line == 2


def test_plain_words_and_other_paths_are_not_citations(rc):
    text = "memory limits 3 GiB; spec/" + W + " C4; 2 x limits of 4.2 GB/s; the §-sign alone"
    assert rc.find_citations("x.md", text) == []


def test_check_lists_missing_sections_and_rewrite_writes_in_place(tmp_path):
    (tmp_path / "docs").mkdir()
    for page in ("workloads.md", "limits.md"):
        shutil.copy(ROOT / "docs" / page, tmp_path / "docs" / page)
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(f'"""Shapes ({W} A1), floors ({L} §1.4)."""\n')
    bad.write_text(f"# ({W} C99) and ({LP} 4.2 rule 42) and ({LP} 9.9)\n")
    out = _run("--check", "--root", str(tmp_path))
    assert out.returncode == 1
    assert "bad.py:1:" in out.stdout and f"missing {DW} C99" in out.stdout
    assert f"missing {DL} 4.2 rule 42" in out.stdout and f"missing {DL} 9.9" in out.stdout
    assert "good.py" not in out.stdout
    assert _run("--root", str(tmp_path), "good.py").returncode == 0
    assert good.read_text() == '"""Shapes (docs/workloads.md A1), floors (docs/limits.md 1.4)."""\n'
    assert _run("--check", "--root", str(tmp_path), "good.py").returncode == 0


def test_bad_input_exits_2(tmp_path):
    out = _run("--check", "--root", str(tmp_path))
    assert out.returncode == 2 and "missing" in out.stderr and "docs/workloads.md" in out.stderr
    out = _run("--root", str(ROOT), "no/such/file.py")
    assert out.returncode == 2 and "no such file" in out.stderr
