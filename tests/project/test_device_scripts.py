"""The device scripts (scripts/device/*.sh) are right before they travel: each parses, every file it names exists,
and every flag written out on a line that calls an rlperf command, a repository script or one of common.sh's helpers
(`replay` calls `rlperf replay`, `interleaved` the interleave probe) is one that command or script defines. Flags
held in shell variables and arrays are not read.

Why: a device call costs minutes of a 30-minute budget, and a machine is often not lent at all; a typo found on the
GPU host is a call lost."""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "scripts" / "device").glob("*.sh"))
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
INTERLEAVE_PROBE = "scripts/device/probe_interleaved.py"  # what common.sh's `interleaved` calls
_END = re.compile(r"\s(?:>|2>|\||;|&&)")  # where a command's own arguments end on its line


def _commands(path: Path) -> list[str]:
    """The script's lines with backslash continuations joined and comments dropped."""
    text = path.read_text().replace("\\\n", " ")
    return [line.split(" # ")[0] for line in text.splitlines() if not line.lstrip().startswith("#")]


def _args(line: str, start: int) -> str:
    end = _END.search(line, start)
    return line[start:end.start() if end else len(line)]


def _rlperf_flags(words: list[str]) -> set[str]:
    """The option strings of `rlperf WORDS...`: the command, then any subcommands among the next words."""
    from rlperf.cli import build_parser

    parser = build_parser(words[:1])
    for word in words:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or word not in sub.choices:
            break
        parser = sub.choices[word]
    return set(parser._option_string_actions)


@functools.lru_cache(maxsize=None)
def _script_flags(script: str) -> frozenset[str]:
    """The flags a repository script's `--help` lists (its parser may be built by a shared helper)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0, f"{script} --help failed: {p.stderr[-500:]}"
    return frozenset(_FLAG.findall(p.stdout))


def test_there_are_device_scripts_to_check():
    assert len(SCRIPTS) > 10 and (ROOT / "scripts" / "device" / "common.sh") in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_device_script_parses_and_names_only_files_that_exist(script):
    p = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    named = set(re.findall(r"(?<![\w/$.-])((?:scripts|tests|src)/[\w./-]+\.(?:py|sh))", script.read_text()))
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"{script.name} names files that do not exist: {missing}"


def _wrong_flags(script: Path) -> list[str]:
    """Each flag the script writes out for `python3 -m rlperf CMD`, `python3 scripts/X.py` or a common.sh helper
    that the command or script does not define."""
    wrong = []
    for line in _commands(script):
        for m in re.finditer(r"python3 -m rlperf((?: [a-z][a-z0-9-]*)+)", line):
            flags = set(_FLAG.findall(_args(line, m.end()))) - {"--help"}
            words = m.group(1).split()
            wrong += [f"rlperf {words[0]} {f}" for f in sorted(flags - _rlperf_flags(words))]
        helper = re.match(r"\s*(replay|interleaved) \S+ \S+ \S+", line)  # common.sh: NAME and two more arguments
        if helper and helper.group(1) == "replay":
            wrong += [f"replay (rlperf replay) {f}" for f in
                      sorted(set(_FLAG.findall(_args(line, helper.end()))) - _rlperf_flags(["replay"]))]
        elif helper:
            line = line[:helper.start(1)] + "python3 " + INTERLEAVE_PROBE + line[helper.end():]
        for m in re.finditer(r"python3 (scripts/[\w./-]+\.py)", line):
            flags = set(_FLAG.findall(_args(line, m.end()))) - {"--help"}
            if flags:  # a script called without flags may have no parser at all
                wrong += [f"{m.group(1)} {f}" for f in sorted(flags - _script_flags(m.group(1)))]
    return wrong


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_flag_a_device_script_passes_is_defined_by_what_it_calls(script):
    wrong = _wrong_flags(script)
    assert not wrong, f"{script.name} passes flags its commands do not define: {wrong}"


def test_the_flag_check_finds_a_misspelt_flag(tmp_path):
    bad = tmp_path / "bad.sh"
    bad.write_text('timeout 60 python3 -m rlperf replay --capacity-exponent 20 --gpu-counts 1 > "$R/x.log" 2>&1\n'
                   "python3 scripts/probe_host_gather_streaming.py --threds 2 \\\n  --out x.json  # --not-a-flag\n"
                   "    replay d gpu-fused 20,22 --no-ceiling\n"
                   "    interleaved host 1 3 --placements host --againts reference-host\n")
    assert _wrong_flags(bad) == ["rlperf replay --capacity-exponent", "scripts/probe_host_gather_streaming.py --threds",
                                 "replay (rlperf replay) --no-ceiling",
                                 "scripts/device/probe_interleaved.py --againts"]
