"""One module holds the atomic writers (the structure issue, sections 1 and 6): every write-to-a-temp-then-rename in src goes
through rlperf.atomic, so each gets its guarantees (whole or nothing, the umask's mode, no stray temp
file). Parses source only."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "rlperf"
RENAMES = {"replace", "rename", "renames"}
# Where a rename is not a file write: name the reason. gate/ owns its internals (issue 25).
ALLOWED = {"rlperf/atomic.py": "the writers themselves",
           "rlperf/gate/passdir.py": "moves a finished pass folder onto an absent or empty one (gate-owned)",
           "rlperf/gate/power/sessions.py": "moves a cut session's folder aside to an absent name (gate-owned)"}


def renames(path: Path) -> list[int]:
    """Lines calling os.replace / os.rename / Path.replace|rename(target) (a str.replace takes two arguments,
    dataclasses.replace keyword ones)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RENAMES:
            owner = node.func.value
            module = owner.id if isinstance(owner, ast.Name) else None
            if module in ("os", "shutil") or (module != "dataclasses" and len(node.args) == 1 and not node.keywords):
                lines.append(node.lineno)
    return lines


def test_every_rename_into_place_is_an_atomic_writer():
    found = {str(p.relative_to(SRC.parent)): renames(p) for p in sorted(SRC.rglob("*.py"))}
    stray = {path: lines for path, lines in found.items() if lines and path not in ALLOWED}
    assert not stray, f"write through rlperf.atomic (write_text/write_bytes/write_json/atomic_path) instead: {stray}"
    assert all(found[path] for path in ALLOWED), "an allowed module no longer renames: drop it from ALLOWED"


def test_the_check_sees_os_replace_and_a_path_rename_but_not_str_replace(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text("import os\nos.replace(a, b)\ntmp.rename(path)\ns = name.replace('-', '_')\n"
                    "c = dataclasses.replace(c, x=1)\nd = replace(d, x=1)\n")
    assert renames(fake) == [2, 3]
