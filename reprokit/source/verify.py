"""A reduced script checked and finished as repro.py, each step in the order it runs: written, run twice in fresh
interpreters and once with compile off (verified when both fail the same way and the plain run passes), run alone
until its rate is known (minify/reliability), and then its notes, its size in lines and its counts."""

from __future__ import annotations

import dataclasses
import os
import time

from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import TrialSpec, text_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.minify.reliability import measure
from reprokit.source.polish import polished


class Checks:
    """The checks of one source reduction's repro.py, with what each needs: the run folder, the isolation (its
    signature is the target), the runner, `same` (an export failure's guard) and the run's facts: its cwd, the
    folder the bisect ran the script in, and its interpreter, which repro.py runs alone with."""

    def __init__(self, run_dir: RunDir, isolation: Isolation, runner, same, emit, facts: RunFacts):
        self.run_dir, self.isolation, self.runner = run_dir, isolation, runner
        self.same, self.emit, self.facts = same, emit, facts

    def polished(self, r: Repro, text: str) -> Repro:
        """`text` polished (its checks say what differs, ruff's layout: source/polish.py) checked as repro.py, else
        `text` as it is: the repro left as repro.py, verified when one verified and failed often enough."""
        for candidate in dict.fromkeys((polished(text), text)):
            r = self(r, candidate)
            if r.verified:
                return r
        return r

    def __call__(self, r: Repro, text: str) -> Repro:
        """`text` written as repro.py, verified, and its rate in fresh runs measured."""
        self.run_dir.write_text("repro.py", text)
        r = self.verified(r, text)
        return measure(self.run_dir, r, self.isolation.signature, self.runner.timeout, self.emit, self.facts.python)

    def verified(self, r: Repro, text: str) -> Repro:
        """repro.py run twice in fresh interpreters: verified when both fail the same way and, with compile off,
        it passes."""
        target, isolation = Signature.from_dict(self.isolation.signature), self.isolation
        specs = [
            TrialSpec(
                mode="script",
                stage="user",
                script=self.run_dir.file("repro.py"),
                cwd=self.facts.cwd,
                argv=tuple(isolation.argv),
                attempt=i,
                label=f"verify-repro-{i}",
                path_dirs=(os.path.dirname(isolation.script),),
                script_hash=text_hash(text),
                fresh_interpreter=True,
            )
            for i in range(2)
        ]
        plain_spec = dataclasses.replace(specs[0], stage="none", label="verify-repro-no-compile")
        *checks, plain = self.runner.map(specs + [plain_spec])
        same = self.same
        verified = all(c is not None and target.matches(c.signature) and (same is None or same(c)) for c in checks)
        return dataclasses.replace(
            r,
            path=self.run_dir.file("repro.py"),
            fresh_runs=len(checks),
            verified=verified and plain is not None and plain.kind == OutcomeKind.PASS,
            signature=checks[0].signature.to_dict() if checks[0] else None,
        )


def code_lines(text: str) -> int:
    """Lines that are not blank: the formatter's blank lines around a def are no part of a repro's size."""
    return sum(1 for line in text.splitlines() if line.strip())


def finished(r: Repro, notes: list, runner, original: str, text: str, at: tuple, emit) -> Repro:
    """The source repro finished, in this order: each note said and added to the verdict's message; its size in
    lines against the script's, and the reduction's trials and seconds (at: the runner's count of trials run and
    the clock when the reduction started); its sizes and counts said."""
    for said in notes:
        emit(Event.NOTE, text=said)
        r = dataclasses.replace(r, message="; ".join(x for x in (r.message, said) if x))
    before, started = at
    r = dataclasses.replace(
        r,
        nodes_before=code_lines(original),
        nodes_after=code_lines(text),
        unit="lines",
        trials=runner.executed - before,
        seconds=round(time.monotonic() - started, 2),
    )
    emit(Event.MINIFIED, **r.progress())
    return r
