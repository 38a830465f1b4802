"""reprokit capture: a job run once as the user runs it, its failing graph recorded for bisect --from-capture."""

from __future__ import annotations

import shlex
import sys

import click

from reprokit.app import capture as capture_case
from reprokit.cli_errors import one_line_errors


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--output-dir", "-o", required=True, help="The capture folder (graphs, inputs, the failure).")
@click.option("--max-input-bytes", type=int, default=64 << 20, help="Real values kept per graph input (bytes).")
@click.option(
    "--max-graph-input-bytes", type=int, default=None, help="Real values kept per graph in all [4x --max-input-bytes]."
)
@click.option("--keep-inputs-on-disk", is_flag=True, help="Inputs over the caps streamed to disk, not replaced.")
@click.option(
    "--compile-timeout",
    default=None,
    metavar="DURATION",
    help="One graph's compile past this (90s, 5m) is written as a hang, and the job stops.",
)
@click.option("--fall-back-to-eager", is_flag=True, help="With --compile-timeout: that graph runs eagerly instead.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors("exit_status", signals=False)  # the job's own signals are its to handle, and its exit status
def capture(
    output_dir,
    max_input_bytes,
    max_graph_input_bytes,
    keep_inputs_on_disk,
    compile_timeout,
    fall_back_to_eager,
    command,
):
    """Run a job once as you run it, recording the failing graph where it fails.

    reprokit capture --output-dir DIR -- torchrun --nproc-per-node 8 train.py   (then: reprokit bisect
    --from-capture DIR). Under a launcher reprokit cannot wrap, REPROKIT_CAPTURE=DIR does the same."""
    run = capture_case.capture_command(
        output_dir,
        tuple(command),
        max_input_bytes=max_input_bytes,
        compile_timeout=compile_timeout,
        fall_back=fall_back_to_eager,
        max_graph_input_bytes=max_graph_input_bytes,
        inputs_on_disk=keep_inputs_on_disk,
    )
    for report in run.fault_reports:  # the job's own faulthandler report, which the capture wrote to its folder
        click.echo(report.rstrip("\n"), err=True)
    if run.failures:
        click.echo(
            f"reprokit capture: the failing graph is in {run.output_dir}/{run.failures[0]}; next: reprokit "
            f"bisect --from-capture {shlex.quote(output_dir)}",
            err=True,
        )
    sys.exit(run.exit_status)
