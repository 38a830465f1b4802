"""Where a run's trials and seconds went, phase by phase, counted from the events the use cases emit.

The verdict counts the trials up to the verdict only (issue #28: "trials 10 in 87.3 s" for a run of 26 trials in
251 s); this counts every trial the CLI was told of and every second from the command's start to its summary.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# What each phase does, as the live display and the plain lines say it.
PHASES = {
    "start": "the script as written and without compile, side by side",
    "warm-cache": "the script twice on one inductor cache, cold then warm",
    "ladder": "which compiler stage fails",
    "graph": "which graph fails",
    "configs": "inductor config flips",
    "subsystems": "torch's pass and lowering counters",
    "modes": "compile modes",
    "minify": "capturing and cutting the failing graph",
    "repro": "writing repro.py and checking it in fresh interpreters",
    "evidence": "after the repro: the boundary's re-run, config flips, torch's logs",
    "pack": "the tarball",
    "versions": "other torch releases",
}

# Events that announce a phase without a "phase" event of their own.
PHASE_OF_EVENT = {"run_dir": "start", "ladder_start": "ladder", "minify_start": "minify"}


def runs_the_script(spec) -> bool:
    """A trial that ran the user's script, or a reduced copy of it: what a long job pays for (repro.py's own
    checks in fresh interpreters run a script too, a small one, and are not counted)."""
    return getattr(spec, "mode", None) == "script" and os.path.basename(spec.script or "") != "repro.py"


def clock(seconds: float) -> str:
    """0:07, 1:23, 1:02:03: the elapsed time as the status line and the phase lines show it."""
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@dataclass
class PhaseCount:
    name: str
    started: float
    seconds: float = 0.0
    trials: int = 0
    scripts: int = 0  # of the trials, runs of the whole script (the rest ran a graph, a repro or a model)
    reused: int = 0  # questions the journal answered (asked before in this run, or by the run resumed): no process


@dataclass
class Tally:
    """The current phase, the trials finished in each, and the seconds each lasted."""

    clock: Callable[[], float] = time.monotonic
    phases: list = field(default_factory=list)
    started: float = 0.0
    ended: float | None = None  # set by close(): the summary's seconds stop there
    running: int = 0  # trials started and not finished, known only from "trial_start" events

    def __post_init__(self):
        self.started = self.now()
        self.phases.append(PhaseCount("start", self.started))

    def now(self) -> float:
        return self.clock() if self.ended is None else self.ended

    @property
    def current(self) -> PhaseCount:
        return self.phases[-1]

    def elapsed(self) -> float:
        return self.now() - self.started

    def trials(self) -> int:
        return sum(p.trials for p in self.phases)

    def enter(self, name: str) -> bool:
        """Start phase `name` (a phase entered again, like minify after its "minify" event, is no new phase);
        True when it is a new one."""
        if name == self.current.name:
            return False
        now = self.now()
        self.current.seconds = now - self.current.started
        self.phases.append(PhaseCount(name, now))
        return True

    def event(self, event: str, d: dict) -> bool:
        """Count one event; True when it started a new phase."""
        if event == "trial_start":  # the runner's on_start, where the app passes it on
            self.running += 1
            return False
        if event == "trial":
            if d.get("cached"):
                self.current.reused += 1
            else:
                self.current.trials += 1
                self.current.scripts += runs_the_script(d.get("spec"))
                self.running = max(0, self.running - 1)
            return False
        name = d.get("name") if event == "phase" else PHASE_OF_EVENT.get(event)
        return self.enter(name) if name else False

    def close(self) -> None:
        if self.ended is None:
            self.ended = self.clock()
            self.current.seconds = self.ended - self.current.started

    def merged(self) -> list:
        """One row per phase name, in the order first entered (a run may come back to a phase: configs after
        the repro are counted under evidence, but resume's start and the pack may repeat)."""
        rows: dict = {}
        for p in self.phases:
            row = rows.setdefault(p.name, PhaseCount(p.name, p.started))
            row.seconds += p.seconds if p is not self.current else self.now() - p.started
            row.trials += p.trials
            row.scripts += p.scripts
            row.reused += p.reused
        return [r for r in rows.values() if r.trials or r.reused or r.seconds >= 0.05]


def tally_table(tally: Tally) -> str:
    """Every trial and every second of the run, phase by phase, with the total; "script": the trials that ran the
    whole script (what a long job pays for). "reused": questions the journal answered without a process, shown
    when there were any."""
    tally.close()
    rows = tally.merged()
    reused = any(r.reused for r in rows)
    total = PhaseCount(
        "all",
        tally.started,
        tally.elapsed(),
        sum(r.trials for r in rows),
        sum(r.scripts for r in rows),
        sum(r.reused for r in rows),
    )
    cells = [["phase", "trials", "script"] + (["reused"] if reused else []) + ["seconds"]]
    cells += [
        [r.name, str(r.trials), str(r.scripts)] + ([str(r.reused)] if reused else []) + [f"{r.seconds:.1f}"]
        for r in rows + [total]
    ]
    width = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    cells.insert(1, ["-" * w for w in width])
    return "\n".join(
        "  ".join(c.ljust(width[0]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(r)) for r in cells
    )
