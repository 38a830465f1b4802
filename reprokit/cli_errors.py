"""How every command fails: bad input exits 2 and "nothing to isolate" exits 3, each with one line on stderr."""

from __future__ import annotations

import contextlib
import functools
import json
import sys

import click

from reprokit.app.common import stop_trials
from reprokit.cli_signals import exits_on_signals
from reprokit.data.verdict import Verdict
from reprokit.errors import EXIT_MORE_ACCURATE, NothingToIsolate, ReprokitError

EXIT_BAD_INPUT = 2
EXIT_NOTHING = 3


def fail(message: str, code: int):
    """One line on stderr, then exit with code."""
    click.echo(f"reprokit: {message}", err=True)
    sys.exit(code)


def verdict_exit(v: Verdict) -> None:
    """A finished verdict that found compiled the more accurate one: its one line on stderr, then exit 4."""
    if v.run.exit_code == EXIT_MORE_ACCURATE:
        from reprokit.report.numerics_notes import more_accurate_line

        fail(more_accurate_line(v), EXIT_MORE_ACCURATE)


def one_line_errors(empty_key: str, signals: bool = True):
    """Bad input exits 2 and "nothing to isolate" exits 3, each with one line on stderr (and with --json, one
    JSON object on stdout whose empty_key is null). Every command wears this. With `signals`, SIGINT, SIGTERM and
    SIGHUP stop the command's trials and exit 130, 143, 129 with one line saying how to go on (cli_signals)."""

    def wrap(command):
        @functools.wraps(command)
        def guarded(*args, **kwargs):
            ending = exits_on_signals(stop_trials, command.__name__, kwargs, empty_key)
            try:
                with ending if signals else contextlib.nullcontext():
                    return command(*args, **kwargs)
            except ReprokitError as e:
                fail(str(e), EXIT_BAD_INPUT)
            except NothingToIsolate as e:
                if kwargs.get("as_json"):
                    click.echo(json.dumps({empty_key: None, "message": str(e), "exit_code": EXIT_NOTHING}))
                fail(str(e), EXIT_NOTHING)

        return guarded

    return wrap
