"""The one error type the CLI turns into a single line and exit code 2."""


class ReprokitError(Exception):
    """Bad input or environment: the message says what is wrong and what to do."""


class NothingToIsolate(Exception):
    """The script passes everywhere, or fails without compile too: not a compiler bug (exit 3)."""
