"""What a command records of itself and prints as JSON."""

from __future__ import annotations

import json
import shlex
import sys

import click


def invoked(name: str) -> str:
    """The command line as the user typed it, for run.json and the issue text."""
    return f"reprokit {name} " + " ".join(shlex.quote(a) for a in sys.argv[2:])


def echo_json(data) -> None:
    """One JSON object on stdout, keys sorted."""
    click.echo(json.dumps(data, sort_keys=True))
