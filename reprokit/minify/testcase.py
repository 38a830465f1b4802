"""test_repro.py: the verified repro as a failing test in PyTorch's style (TestCase/run_tests), checked once in a
fresh interpreter to fail the way the bug does.

The test asserts the correct behaviour: the compiled graph runs and computes what eager computes (judged against
a float64 reference, as repro.py's accuracy check does). It fails today and passes once the bug is fixed.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable

from reprokit import __version__
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.rundir import RunDir
from reprokit.data.signature import WRAPPERS, Signature, normalise_message
from reprokit.data.stages import STAGE_TITLES
from reprokit.minify.alone import HANG_SAID, run_alone
from reprokit.report.decisive import last_chain
from reprokit.report.render import environment

NO_FAILURE = 'print("no failure: the bug did not reproduce")'


def test_text(repro_text: str, isolation: Isolation, stage: str, target: Signature, backward: bool) -> str:
    """test_repro.py's text from repro.py's text rendered with the accuracy check (the correct behaviour): its
    definitions (imports, config, the graph) as they are, and what it runs after them as the test's body."""
    lines = repro_text.rstrip("\n").split("\n")
    lines = lines[next((i for i, l in enumerate(lines) if not l.startswith("#")), len(lines)) :]  # not its header
    start = next(i for i, l in enumerate(lines) if l.startswith("class Repro("))
    run_from = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    definitions = "\n".join(lines[:run_from]).strip("\n")
    body = "\n".join(l for l in lines[run_from:] if l.strip() and l != NO_FAILURE)
    torch_version = re.search(r"with torch (\S+?)\.?$", repro_text.split("\n", 1)[0])
    name = re.sub(r"\W+", "_", stage).strip("_") or "compile"
    return (
        environment()
        .get_template("test_repro.py.j2")
        .render(
            reprokit_version=__version__,
            torch_version=torch_version.group(1) if torch_version else "?",
            stage_title=STAGE_TITLES.get(stage, stage),
            expected=target.said(),
            definitions=definitions,
            body=body,
            graph=isolation.graph,
            backward=backward,
            class_name="TestCompileRepro",
            test_name=f"test_{name}_matches_eager",
        )
    )


def write_test_repro(
    run: RunDir,
    isolation: Isolation,
    stage: str,
    target: Signature,
    backward: bool,
    render: Callable[[], str],
    python: str,
    timeout: float = 600.0,
) -> tuple:
    """Write test_repro.py beside repro.py and run it once in a fresh interpreter: (its path, seconds, whether it
    fails as the bug does, its failing line). A resumed minify that writes the same text reads the recorded run."""
    text = test_text(render(), isolation, stage, target, backward)
    path = run.file("test_repro.py")
    if (
        run.exists("test_repro.py")
        and run.exists("test_repro_output.txt")
        and run.exists("test_repro.json")
        and open(path).read() == text
    ):
        recorded = run.read_json("test_repro.json")
        return (
            path,
            recorded.get("seconds"),
            *judge_test(target, recorded.get("returncode"), open(run.file("test_repro_output.txt")).read()),
        )
    run.write_text("test_repro.py", text)
    code, output, seconds = run_alone(run, "test_repro.py", timeout, python)
    run.write_text("test_repro_output.txt", output)
    run.write_json("test_repro.json", {"returncode": code, "seconds": seconds})
    return (path, seconds, *judge_test(target, code, output))


def discard_test_repro(run: RunDir) -> None:
    """Remove a test_repro.py written beside a repro.py that did not verify (the next input mode writes its own)."""
    for name in ("test_repro.py", "test_repro_output.txt", "test_repro.json"):
        if run.exists(name):
            os.unlink(run.file(name))


def judge_test(target: Signature, returncode, output: str) -> tuple:
    """(fails as the bug does, its failing line) for one run of test_repro.py."""
    if returncode is None:
        return target.kind == OutcomeKind.HANG, "timed out"
    said = HANG_SAID.search(output) if returncode else None
    if said:  # the watchdog's own report of the hang
        return target.kind == OutcomeKind.HANG, output[said.start() :].split("\n", 1)[0]
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return target.kind == OutcomeKind.CRASH and target.exc_type == name, f"killed by {name}"
    if returncode == 0:
        return False, "passed"
    chain = last_chain(output)
    line = next((l for l in (chain[-1][1] if chain else []) if l.strip()), "")
    exc_type, _, message = line.partition(": ")
    exc_type = exc_type.rsplit(".", 1)[-1]
    return same_exception(target, exc_type, message), line[:300] or "failed without a traceback"


def same_exception(target: Signature, exc_type: str, message: str) -> bool:
    """The test's final exception against the bug's signature: an accuracy bug fails the test's assertion; an
    exception is the same type and message (or the same root cause behind a compiler wrapper)."""
    if target.kind == OutcomeKind.ACCURACY or target.exc_type == "AssertionError":
        return exc_type == "AssertionError"
    if target.kind != OutcomeKind.EXCEPTION:
        return False
    if exc_type == target.exc_type and normalise_message(message) == target.message:
        return True
    cause = root_cause_of_text(exc_type, message)
    return target.cause is not None and target.cause.split(" @ ", 1)[0] == f"{cause[0]}: {normalise_message(cause[1])}"


def root_cause_of_text(exc_type: str, message: str) -> tuple:
    """(type, message) behind compiler wrappers, read from the printed text ("InductorError: Type: message")."""
    while exc_type in WRAPPERS:
        m = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failed)): ?(.*)$", message.strip(), re.S)
        if not m:
            break
        exc_type, message = m.group(1).rsplit(".", 1)[-1], m.group(2)
    return exc_type, message
