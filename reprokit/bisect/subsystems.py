"""Counted subsystems: which of torch's compiler_bisector subsystems, and which application of it, breaks it."""

from __future__ import annotations

from reprokit.bisect.guess import lowering_guesses
from reprokit.bisect.session import Session, passes
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome
from reprokit.data.stages import SUBSYSTEMS
from reprokit.search import find_boundary, find_boundary_guessing


def consulted_subsystems(stage: str, counts: dict) -> list:
    """Subsystems torch consulted in the failing run (cudagraphs on a CPU run is not): the only ones asked about."""
    names = [n for n in SUBSYSTEMS[stage] if counts.get(f"{stage}/{n}", 0) > 0]
    if not counts:
        names = [n for n in SUBSYSTEMS[stage] if n != "cudagraphs"]
    return names


def subsystem_spec(s: Session, stage: str, name: str, max_: int, attempt: int = 0, label: str | None = None):
    """A trial of `stage` with subsystem `name` allowed `max_` applications (-1: none, i.e. off)."""
    return s.spec(
        stage, label or f"{name}-max{max_}", subsystem={"backend": stage, "name": name, "max": max_}, attempt=attempt
    )


def subsystem(s: Session, stage: str, failing: Outcome, confirm: bool = True) -> dict | None:
    """The subsystem that fixes it when off, and the first of its applications that breaks it. With confirm, the
    boundary is re-run at once; without, "confirmed" is None and confirm_boundary asks later."""
    counts = failing.counters or {}
    names = consulted_subsystems(stage, counts)
    if not names:
        return None

    def spec_for(name, max_, attempt=0, label=None):
        return subsystem_spec(s, stage, name, max_, attempt, label)

    fixed = subsystems_that_fix(s, stage, names, spec_for)
    s.emit(Event.SUBSYSTEMS, tried=names, fixes=fixed)
    if not fixed:
        return None
    # Torch's order: passes before lowerings. Turning every lowering off hides most codegen bugs,
    # so a pass that fixes it alone is the more specific answer.
    name = fixed[0]
    total = counts.get(f"{stage}/{name}")
    # Runs that failed the same way (not s.fails_same: it would note a different failure as another bug again).
    same = (
        [
            o
            for o in (s.original, *s.stage_outcomes.values())
            if o is not None and o is not failing and s.target is not None and s.target.matches(o.signature)
        ]
        if name == "lowerings"
        else []
    )
    guesses = lowering_guesses(failing, same) if name == "lowerings" else []
    boundary = _first_breaking_application(s, lambda max_: spec_for(name, max_), total, guesses)
    if boundary is None:
        return None
    detail = s.runner(spec_for(name, boundary)).bisect_detail
    result = {"name": name, "application": boundary, "applications": total, "detail": detail, "confirmed": None}
    if confirm:
        result["confirmed"] = confirm_boundary(s, stage, result)
    s.emit(Event.SUBSYSTEM, **result)
    return result


def confirm_boundary(s: Session, stage: str, result: dict) -> bool:
    """Whether the boundary holds on a re-run of both its sides: one that moves is noise, not an answer."""
    name, boundary = result["name"], result["application"]
    confirm = s.runner.map(
        [subsystem_spec(s, stage, name, boundary, attempt=1), subsystem_spec(s, stage, name, boundary - 1, attempt=1)]
    )
    return s.fails_same(confirm[0]) and confirm[1] is not None and confirm[1].kind == OutcomeKind.PASS


def _first_breaking_application(s: Session, spec_at, total: int | None, guesses: list) -> int | None:
    """The smallest application count at which the subsystem, allowed that many applications, fails the same way.
    Guessed applications are asked first (see guess.lowering_guesses)."""

    def fails_many(points):
        return [s.fails_same(x) for x in s.runner.map([spec_at(p) for p in points])]

    if not total:
        # Without a count (the process died before saving it) probe exponentially for an upper bound.
        return find_boundary(lambda p: fails_many([p])[0], lo=-1, fails_many=fails_many, width=s.runner.jobs)
    return find_boundary_guessing(fails_many, lo=-1, hi=total - 1, guesses=guesses, width=s.runner.jobs)


def subsystems_that_fix(s: Session, stage: str, names: list, spec_for) -> list:
    """The subsystems that, turned off alone, make the failure go away, in torch's order.

    All passes off at once rides in the same round as the last subsystem (lowerings) off: when passes-off
    still fails, no single pass is asked about, which saves a round for codegen bugs. When nothing fixes
    it, every subsystem is asked alone after all, in case turning passes off together hid one that helps.
    """

    singles: dict = {}
    if len(names) > 2:
        group, last = names[:-1], names[-1]
        together = s.spec(stage, f"all-but-{last}-off", subsystem={"backend": stage, "names": group, "max": -1})
        first = s.runner.map([together, spec_for(last, -1, label=f"{last}-off")])
        singles[last] = passes(first[1])
        pending = list(group) if passes(first[0]) or not singles[last] else []
    else:
        pending = list(names)
    outcomes = s.runner.map([spec_for(n, -1, label=f"{n}-off") for n in pending])
    singles.update({n: passes(out) for n, out in zip(pending, outcomes)})
    return [n for n in names if singles.get(n)]
