"""Where a run's trials and seconds went, phase by phase, counted from the events the use cases emit.

The verdict counts the trials up to the verdict only (issue #28: "trials 10 in 87.3 s" for a run of 26 trials in
251 s); this counts every trial the CLI was told of and every second from the command's start to its summary.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reprokit.data.events import Event

# What each phase does, as the live display and the plain lines say it.
PHASES = {
    "start": "the script as written and without compile, side by side",
    "capture": "reading the captured graph and its failure (the job is not run)",
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
PHASE_OF_EVENT: dict[str, str] = {Event.RUN_DIR: "start", Event.LADDER_START: "ladder", Event.MINIFY_START: "minify"}


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
    journal: int = 0  # trials the journal answered, run by the run resumed: no process


@dataclass
class Tally:
    """The current phase, the trials finished in each, and the seconds each lasted."""

    clock: Callable[[], float] = time.monotonic
    phases: list = field(default_factory=list)
    started: float = 0.0
    ended: float | None = None  # set by close(): the summary's seconds stop there
    running: int = 0  # trials started and not finished, known only from "trial_start" events
    said: set = field(default_factory=set)  # the keys of the trials counted, so a question asked again is once

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
        if event == Event.TRIAL_START:  # the runner's on_start, where the app passes it on
            self.running += 1
            return False
        if event == Event.TRIAL:
            self.said.add(d["spec"].key())
            if d.get("cached"):
                self.current.journal += 1
            else:
                self.current.trials += 1
                self.current.scripts += runs_the_script(d.get("spec"))
                self.running = max(0, self.running - 1)
            return False
        if event == Event.RUN_DIR and d.get("phase"):  # the first phase, begun with the command, named by its use case
            self.current.name = d["phase"]
            return False
        name = d.get("name") if event == Event.PHASE else PHASE_OF_EVENT.get(event)
        return self.enter(name) if name else False

    def answered_before(self, d: dict) -> bool:
        """A trial event that is the journal's answer to a question this run counted already (the bisect asks
        some twice, a resumed run asks its earlier trials again): listed and counted once, where first asked."""
        return bool(d.get("cached")) and d["spec"].key() in self.said

    def count(self, name: str) -> PhaseCount | None:
        """The phase's row so far (merged), or None when the run never entered it."""
        return next((r for r in self.merged() if r.name == name), None)

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
            row.journal += p.journal
        return [r for r in rows.values() if r.trials or r.journal or r.seconds >= 0.05]


def tally_table(tally: Tally) -> str:
    """Every trial and every second of the run, phase by phase, with the total; "script": the trials that ran the
    whole script (what a long job pays for). "journal": trials of the run resumed that its journal answered, without
    a process, shown when there were any (apart from "trials": those ran)."""
    tally.close()
    rows = tally.merged()
    journal = any(r.journal for r in rows)
    total = PhaseCount(
        "all",
        tally.started,
        tally.elapsed(),
        sum(r.trials for r in rows),
        sum(r.scripts for r in rows),
        sum(r.journal for r in rows),
    )
    cells = [["phase", "trials", "script"] + (["journal"] if journal else []) + ["seconds"]]
    cells += [
        [r.name, str(r.trials), str(r.scripts)] + ([str(r.journal)] if journal else []) + [f"{r.seconds:.1f}"]
        for r in rows + [total]
    ]
    width = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    cells.insert(1, ["-" * w for w in width])
    return "\n".join(
        "  ".join(c.ljust(width[0]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(r)) for r in cells
    )


def phase_trials(tally: Tally, names: tuple) -> str:
    """ "minify 8 trials (and 2 from the journal), repro 2 trials": the phases' rows as the table counts them."""
    rows = [(name, tally.count(name)) for name in names]
    return ", ".join(
        f"{name} {row.trials} trial{'' if row.trials == 1 else 's'}"
        + (f" (and {row.journal} from the journal)" if row.journal else "")
        for name, row in rows
        if row is not None
    )
