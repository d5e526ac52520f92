"""One help layout for every `rlperf` command: descriptions keep their line breaks, and each flag's help
ends with its default, so a user never has to read the source to learn what a bare run does."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Appends `(default: X)` to a flag's help unless the text already names its default, or there is none
    to name (None, False for a switch, a suppressed value). Compared by identity: a default of 0 is
    shown (`0 in (None, False)` is true, and hid every `--seed 0`)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (not text or "default" in text.lower() or no_default(default) or action.option_strings == []):
            return text
        return f"{text} (default: %(default)s)"


def no_default(value) -> bool:
    """Whether a flag's default is nothing to show: None, a switch's False, suppressed, an empty list."""
    return value is None or value is False or value is argparse.SUPPRESS or (isinstance(value, list) and not value)


def apply(parser: argparse.ArgumentParser) -> None:
    """Give `parser` and every sub-command parser below it this layout."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                apply(sub)
