"""The live display on a terminal: a status line under the progress lines, redrawn four times a second.

Why rich: its Live display redraws from its own thread (the ticker that keeps a terminal from going silent while
a trial compiles for a minute), keeps the status line under lines printed from any thread, and erases it at the
end; click's progress bar needs a known length and a caller that advances it, and a bisect has neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from reprokit.cli_render import Printer
from reprokit.cli_signals import Interrupted
from reprokit.cli_tally import PHASES, Tally, clock
from reprokit.data.events import Event

# Often enough that the elapsed time moves every second and no terminal waits 2 s for a byte (issue #28).
REFRESH_PER_SECOND = 4
SPINNER_CELLS = 2  # the "dots" spinner's one cell and the grid's padding after it


class Status:
    """The status line, rendered afresh at each redraw from the tally: spinner, phase, trials, elapsed time. At
    any width the trials and the elapsed time stay whole: the phase's words are cut to make room (before, rich
    cut the line's end, so an 80-column terminal lost the trial count and the time)."""

    def __init__(self, tally: Tally):
        self.tally = tally
        self.spinner = Spinner("dots", style="cyan")

    def text(self, width: int = 200) -> Text:
        t = self.tally
        done = t.trials()
        counts = ([f"{t.running} running"] if t.running else []) + [  # known only where the runner reports starts
            f"{done} trial{'' if done == 1 else 's'} done",
            f"{clock(t.elapsed())} elapsed",
        ]
        tail = " · ".join(counts)
        phase = f"{t.current.name}: {PHASES.get(t.current.name, t.current.name)}"
        room = width - cell_len(tail) - len(" · ")
        if cell_len(phase) > room:
            phase = phase[: max(0, room - 1)].rstrip() + "…"
        return Text(f"{phase} · {tail}", no_wrap=True, overflow="ellipsis")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        grid = Table.grid(padding=(0, 1))
        grid.add_row(self.spinner, self.text(options.max_width - SPINNER_CELLS))
        yield grid


def terminal() -> Console:
    """The console of stderr (stdout stays for the summary, or --json's one object)."""
    return Console(stderr=True, highlight=False)


@contextlib.contextmanager
def progress(verbose: bool, quiet: bool = False) -> Iterator[Printer]:
    """A Printer for the use case's events: on a terminal with the live display around it (a line for each
    finished trial too), elsewhere plain lines. The display is gone when the block ends, before the summary. A
    signal that ends the command leaves with the run folder named so far (Interrupted.run_dir)."""
    console = terminal()
    if quiet or not console.is_terminal or console.is_dumb_terminal:
        printer = RunPrinter(verbose, quiet)
        with _naming_the_run(printer):
            yield printer
        return
    printer = RunPrinter(verbose, quiet, sink=lambda text: console.print(Text(text), soft_wrap=True), trial_lines=True)
    # Anything else written to stdout or stderr meanwhile (a library's warning) goes above the status line, on
    # stderr: stdout is kept for the summary, or --json's one object.
    with (
        Live(
            Status(printer.tally),
            console=console,
            refresh_per_second=REFRESH_PER_SECOND,
            transient=True,
            redirect_stdout=True,
            redirect_stderr=True,
        ),
        _naming_the_run(printer),
    ):
        yield printer


class RunPrinter(Printer):
    """A Printer that keeps the run folder once the use case names it: an interrupted command says where it is."""

    run_dir: str | None = None

    def __call__(self, event: str, **d) -> None:
        if event == Event.RUN_DIR:
            self.run_dir = d.get("path")
        super().__call__(event, **d)


@contextlib.contextmanager
def _naming_the_run(printer: RunPrinter) -> Iterator[None]:
    try:
        yield
    except Interrupted as e:
        e.run_dir = printer.run_dir
        raise
