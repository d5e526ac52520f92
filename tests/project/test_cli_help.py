"""The CLI explains itself: every flag of every command has help text, `--version` answers."""

from __future__ import annotations

import argparse

import pytest

from rlperf import __version__
from rlperf.cli import COMMANDS, build_parser, main


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser([name])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_flag_has_help_text(name):
    parser = _subparser(name)
    bare = [a.option_strings[0] for a in parser._actions
            if a.option_strings and a.help in (None, "") and a.help is not argparse.SUPPRESS]
    assert not bare, f"rlperf {name}: flags without help text: {bare}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_the_default_of_every_flag_that_has_one(name):
    text = _subparser(name).format_help()
    parser = _subparser(name)
    for action in parser._actions:
        if not action.option_strings or action.default in (None, False, argparse.SUPPRESS, []):
            continue
        # the formatter appends "(default: X)" unless the help text already names it
        squeezed = "".join(text.split())  # argparse wraps long lists, at hyphens too
        assert "default" in (action.help or "").lower() or f"(default:{action.default})".replace(" ", "") in squeezed, \
            f"rlperf {name} {action.option_strings[0]}: default {action.default!r} not shown"


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"rlperf {__version__}"


def test_bare_rlperf_prints_a_description_for_users(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "COMMAND -h` shows each command's flags with their defaults" in " ".join(out.split())
    assert "add_parser" not in out  # developer notes stay out of the user's help
