"""reprokit capture: a job run once as the user runs it, its failing graph recorded for bisect --from-capture."""

from __future__ import annotations

import shlex
import sys

import click

from reprokit.app import capture as capture_case
from reprokit.cli_errors import one_line_errors
from reprokit.data.events import Event


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
@click.option(
    "--check-accuracy",
    is_flag=True,
    help="Compare each graph's first calls with eager; the first that diverges is written out as the failure.",
)
@click.option(
    "--check-calls", type=int, default=None, metavar="N", help="With --check-accuracy: calls checked per graph (2)."
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors("exit_status", signals=False)  # the job's own signals are its to handle, and its exit status
def capture(
    output_dir,
    max_input_bytes,
    max_graph_input_bytes,
    keep_inputs_on_disk,
    compile_timeout,
    fall_back_to_eager,
    check_accuracy,
    check_calls,
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
        check_accuracy=check_accuracy,
        check_calls=check_calls,
        emit=_announce,
        max_graph_input_bytes=max_graph_input_bytes,
        inputs_on_disk=keep_inputs_on_disk,
    )
    for report in run.fault_reports:  # the job's own faulthandler report, which the capture wrote to its folder
        click.echo(report.rstrip("\n"), err=True)
    if run.check is not None:
        click.echo(f"reprokit capture: {checked_line(run.check)}", err=True)
    if run.failures:
        click.echo(
            f"reprokit capture: the failing graph is in {run.output_dir}/{run.failures[0]}; next: reprokit "
            f"bisect --from-capture {shlex.quote(output_dir)}",
            err=True,
        )
    elif run.kept_calls:
        click.echo(
            f"reprokit capture: the job ended in error with no exception from torch; each compiled graph's latest "
            f"call is in {run.output_dir}/{run.kept_calls[0]}/calls; next: reprokit bisect --from-capture "
            f"{shlex.quote(output_dir)}",
            err=True,
        )
    if len(run.ended_in) > 1:  # several ranks: which one hung, and which only waited on it
        said = [
            f"rank {r} was {doing}" + (" (the cause: its graph is the hang)" if f"rank{r}" in run.failures else "")
            for r, doing in run.ended_in
        ]
        click.echo(f"reprokit capture: when the job ended, {'; '.join(said)}", err=True)
    sys.exit(run.exit_status)


def _announce(event: str, calls: int = 0, **_data) -> None:
    """The check's cost, said before the job starts."""
    if event == Event.CHECK:
        click.echo(
            f"reprokit capture: --check-accuracy: each graph's first {calls} calls also run eagerly and in float64 "
            "on copies of their inputs (those calls take about 5x as long)",
            err=True,
        )


def checked_line(check) -> str:
    """What the checks found, in one line: the graph that diverged, or that none did (and what was left alone)."""
    if check.diverged is not None:
        rank, graph, mismatch = check.diverged
        return f"graph {graph} (rank {rank}) diverged from eager: {mismatch}"
    line = f"no graph diverged from eager in {check.checked} checked call{'' if check.checked == 1 else 's'}"
    if check.more_accurate:
        line += (
            f"; compiled is more accurate than eager (float64 reference) in {_graphs(check.more_accurate)}: not flagged"
        )
    if check.random:
        line += f"; not checked: {_graphs(check.random)} (random ops)"
    if check.eager_failed:
        line += f"; not checked: {_graphs(check.eager_failed)} (eager raised)"
    return line


def _graphs(graphs) -> str:
    return ("graph " if len(graphs) == 1 else "graphs ") + ", ".join(str(g) for g in graphs)
