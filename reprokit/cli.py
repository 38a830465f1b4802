"""Command line: parse, call the use case in reprokit.app, print. No logic beyond that."""

from __future__ import annotations

import click

from reprokit.cli_bisect import bisect, minify
from reprokit.cli_capture import capture
from reprokit.cli_pack import models, pack
from reprokit.cli_reports import doctor, env, issue
from reprokit.cli_rerun import plan, versions


@click.group()
@click.version_option(package_name="reprokit", prog_name="reprokit")
def main():
    """Turn a torch.compile failure into a minimal repro and an upstream-ready report."""


for _command in (bisect, minify, doctor, pack, models, issue, env, versions, plan, capture):
    main.add_command(_command)


if __name__ == "__main__":
    main()
