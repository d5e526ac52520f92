"""Errors that map to exit codes: bad user input is exit 2, untrustworthy inputs exit 5, never a traceback."""

EXIT_USAGE = 2
EXIT_INFRASTRUCTURE = 5  # the gate's GateExit.INFRASTRUCTURE: no trustworthy inputs, never a verdict or a traceback


class UsageError(Exception):
    """Bad input from the user (flag, file, name); the message names the problem and the valid choices."""


def choice_error(what: str, value: object, valid, context: str = "") -> UsageError:
    """A UsageError for a value outside a closed set, listing the valid ones."""
    where = f" {context}" if context else ""
    return UsageError(f"unknown {what} {value!r}{where}; valid: {', '.join(map(str, valid))}")


class InfrastructureError(Exception):
    """The suite could not get trustworthy inputs (not a verdict about the code under test)."""


class SuiteImportError(InfrastructureError):
    """asv could not import a commit's benchmark suite: a verdict on that commit when it is the head."""

    def __init__(self, message: str, sha: str):
        super().__init__(message)
        self.sha = sha
