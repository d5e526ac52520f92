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


def _parsers(parser: argparse.ArgumentParser, label: str):
    """`parser` and every sub-command parser below it (`rlperf site check`, `rlperf gate-power study`)."""
    yield label, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{label} {name}")


EVERY_PARSER = [pair for name in sorted(COMMANDS) for pair in _parsers(_subparser(name), name)]
IDS = [label for label, _ in EVERY_PARSER]


def _arguments(parser: argparse.ArgumentParser):
    return [a for a in parser._actions
            if not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction)) and a.help is not argparse.SUPPRESS]


def test_every_command_and_its_sub_commands_are_walked():
    assert set(COMMANDS) <= set(IDS)
    assert {"backfill", "site check", "gate-power study"} <= set(IDS)  # nested levels are reached too


@pytest.mark.parametrize(("label", "parser"), EVERY_PARSER, ids=IDS)
def test_every_flag_and_argument_has_help_text(label, parser):
    bare = [a.option_strings[0] if a.option_strings else a.dest for a in _arguments(parser) if not a.help]
    assert not bare, f"rlperf {label}: without help text: {bare}"


def _shown_default(value) -> bool:
    """A default the help must show: anything but None, a switch's False or an empty list; 0 is one."""
    return not (value is None or value is False or value is argparse.SUPPRESS or value == [])


@pytest.mark.parametrize(("label", "parser"), EVERY_PARSER, ids=IDS)
def test_help_shows_the_default_of_every_flag_that_has_one(label, parser):
    squeezed = "".join(parser.format_help().split())  # argparse wraps long lists, at hyphens too
    for action in _arguments(parser):
        if not action.option_strings or not _shown_default(action.default):
            continue
        # the formatter appends "(default: X)" unless the help text already names it
        assert "default" in action.help.lower() or f"(default:{action.default})".replace(" ", "") in squeezed, \
            f"rlperf {label} {action.option_strings[0]}: default {action.default!r} not shown"


def test_a_default_of_zero_is_shown():
    """`--seed` defaults to 0 in env: its help says so (0 == False once hid it)."""
    squeezed = "".join(_subparser("env").format_help().split())
    assert "thesameseedgivesthesameinputs)(default:0)" in squeezed


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
