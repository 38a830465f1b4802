"""A verified repro's reliability, measured and said (issue 50, item 8): repro.py is run again in fresh
interpreters, as the user will run it (minify/alone.py), up to REPROKIT_REPRO_RUNS times (10) with the
verification's runs counted, stopping at 3 failures, as syzkaller gates its reproducers. The rate goes into
verdict.json and ISSUE.md; a repro below the floor is not called verified.

The floor is 3 failures within the runs (3 of 10 at most): a repro a maintainer must run more than three times on
average to see fail is one they will likely see pass once or twice and close the issue on; and stopping at the
third failure keeps a repro that fails every time at one or two more runs (the verification's runs count)."""

from __future__ import annotations

import dataclasses

from reprokit import settings
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Repro
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.minify.alone import alone_signature, failed, run_alone
from reprokit.minify.testcase import judge_test
from reprokit.report.decisive import last_chain

FLOOR = 3


def most_runs() -> int:
    """How many fresh runs a repro gets at most (REPROKIT_REPRO_RUNS, at least 1)."""
    try:
        return max(1, int(settings.REPRO_RUNS.get("10")))
    except ValueError:
        return 10


def measure(run: RunDir, repro: Repro, original: dict | None, timeout: float, emit, python: str) -> Repro:
    """Run the verified repro.py alone until it has failed the same way FLOOR times or run most_runs() times in
    all; the repro with its rate (reliability) and, below the floor, not called verified, its message saying why.
    original: the isolation's signature, the target when the repro's own runs recorded none; python: the run's
    interpreter."""
    if not repro.verified or repro.kind == "warm_cache":  # a warm-cache repro runs itself twice, cold then warm
        return repro
    most = most_runs()
    floor = min(FLOOR, most)
    ran = min(repro.fresh_runs or 1, most)  # the verification's runs each failed the same way
    fails = ran
    target = Signature.from_dict(repro.signature or original)
    while fails < floor and ran < most:
        code, output, _ = run_alone(run, "repro.py", timeout, python)
        ran += 1
        fails += reproduces(code, output, target)
    reliability = {"failed": fails, "runs": ran, "floor": floor, "most": most}
    if fails >= floor:
        return dataclasses.replace(repro, reliability=reliability)
    said = (
        f"repro.py failed the same way in only {fails} of {ran} runs in fresh interpreters, under the floor of "
        f"{floor}: not called verified"
    )
    emit(Event.NOTE, text=said)
    message = "; ".join(x for x in (repro.message, said) if x)
    return dataclasses.replace(repro, reliability=reliability, verified=False, message=message)


def reproduces(code, output: str, target: Signature) -> bool:
    """One run alone failed the way its verification did: a hang or the same signal; an exception of the same
    type (its root cause where the verification read one); any failure for a check's mismatch or an exit."""
    if not failed(code, output):
        return False
    line = judge_test(target, code, output)[1]
    said = alone_signature(code, output, line)
    if target.kind in (OutcomeKind.HANG, OutcomeKind.CRASH):
        return said.kind == target.kind and (target.kind == OutcomeKind.HANG or said.exc_type == target.exc_type)
    if target.kind != OutcomeKind.EXCEPTION or target.reports_mismatch() or target.exc_type == "AssertionError":
        return True  # an exit has no type; a mismatch is its check failing, however it said so
    if not last_chain(output):
        return True  # it exited without a traceback: a script that caught the error (child/caught.py) and exited
    return said.exc_type == target.exc_type or bool(target.cause and target.cause.startswith(f"{said.exc_type}:"))
