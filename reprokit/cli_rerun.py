"""reprokit versions and reprokit plan: a finished run tried under other torch releases, or planned on K nodes."""

from __future__ import annotations

import json

import click

from reprokit.app import plan as plan_case
from reprokit.app import versions as versions_case
from reprokit.cli_errors import one_line_errors
from reprokit.cli_live import progress
from reprokit.cli_output import echo_json
from reprokit.cli_render import plan_table, versions_table
from reprokit.errors import ReprokitError


@click.command()
@click.argument("run_dir", required=False)
@click.option(
    "--torch",
    "torch_list",
    default=None,
    metavar="2.12.1,2.14.1",
    help="Releases to try, comma-separated (the user's own is always tried).",
)
@click.option("--newest", is_flag=True, help="Only the user's release and the newest.")
@click.option("--between", nargs=2, default=None, metavar="A B", help="Every minor release's newest patch from A to B.")
@click.option(
    "--bisect",
    "bisect_releases",
    is_flag=True,
    help="Find the first release on the failing side between a passing and a failing one.",
)
@click.option("--index-url", default=None, help="A package index for torch's wheels (a nightly or CPU-only one).")
@click.option("--cache-dir", default=None, help="Where the environments go (default ~/.cache/reprokit/torch-envs).")
@click.option("--clean", is_flag=True, help="Remove every environment reprokit versions made, and stop.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("versions")
def versions(run_dir, torch_list, newest, between, bisect_releases, index_url, cache_dir, clean, as_json):
    """Run RUN_DIR's failure (its verified repro.py, else the script) under other torch releases.

    Each release gets its own uv-managed environment in the cache folder, made once and reused."""
    if clean:
        done = versions_case.clean(cache_dir)
        click.echo(
            json.dumps(done)
            if as_json
            else f"removed {len(done['removed'])} entries ({done['bytes'] / 2**30:.1f} GiB) from {done['cache_dir']}"
        )
        return
    if not run_dir:
        raise ReprokitError("pass the run folder of a reprokit bisect, or --clean")
    if sum(bool(x) for x in (torch_list, newest, between)) > 1:
        raise ReprokitError("--torch, --newest and --between choose the releases: pass one of them")
    with progress(False, quiet=as_json) as printer:
        result = versions_case.check_releases(
            run_dir,
            torch_list,
            newest,
            tuple(between) if between else None,
            bisect_releases,
            index_url,
            cache_dir,
            emit=printer,
        )
    if as_json:
        echo_json(result)
    else:
        click.echo(versions_table(result))


@click.command()
@click.argument("run_dir")
@click.option(
    "--nodes",
    "nodes",
    default="1,2,4,8",
    metavar="K[,K...]",
    help="Node counts to plan for, comma-separated (default 1,2,4,8).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("plans")
def plan(run_dir, nodes, as_json):
    """How long RUN_DIR's run would have taken on K nodes (each round's trials packed longest-first), and the
    node-hours its trials spent, from its journal."""
    try:
        counts = [int(k) for k in nodes.split(",") if k.strip()]
    except ValueError:
        raise ReprokitError(f"--nodes takes node counts such as 1,2,4,8 (got {nodes})") from None
    if not counts or min(counts) < 1:
        raise ReprokitError(f"--nodes takes node counts of 1 or more (got {nodes})")
    result = plan_case.plan_run(run_dir, counts)
    if as_json:
        echo_json(result)
    else:
        click.echo(plan_table(result))
