"""The errors the CLI turns into a single line and exit code 2 or 3, and the exit code of a finished verdict that
found compiled the more accurate one."""


class ReprokitError(Exception):
    """Bad input or environment: the message says what is wrong and what to do."""


class NothingToIsolate(Exception):
    """The script passes everywhere, or fails without compile too: not a compiler bug (exit 3)."""


# Compiled differs from eager but is the closer to float64: the verdict is finished (stage, the setting that gives
# eager's bits back, the lowering), the tarball packed, and the command exits 4 with one line (cli_errors).
EXIT_MORE_ACCURATE = 4
