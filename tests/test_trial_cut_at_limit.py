"""A trial cut at its limit is a hang, whatever its process wrote as the limit's signals came: at the limit SIGUSR1
goes to the trial's whole process group for the stacks, a compiler the trial runs (g++) dies by it, and the compile
raises before the SIGKILL. A looping pass's subsystem search met it on CPU: every trial whose g++ still ran at the
limit answered "CppCompileError: C++ compile error", so no count of post-grad passes ended the hang."""

import json
import os
import sys
import textwrap
import time

from reprokit.trial.launch import run_process
from reprokit.trial.outcome import classify

# The trial as inductor runs g++: a child process it waits on, whose failure it raises and reports as its result.
TRIAL = """\
import faulthandler, json, os, signal, subprocess, sys, time

trial_dir = sys.argv[1]
stacks = open(os.path.join(trial_dir, "stacks.txt"), "w")  # as child/main.arm_faulthandler arms a trial
faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
status = subprocess.run(["sleep", "60"]).returncode  # "g++", still compiling at the limit
with open(os.path.join(trial_dir, "result.json"), "w") as f:
    json.dump({"kind": "exception", "note": f"the compiler exited {status}",
               "signature": {"kind": "exception", "exc_type": "CppCompileError", "message": "C++ compile error"}}, f)
time.sleep(60)
"""


def cut_at(tmp_path, limit: float, script: str):
    (tmp_path / "trial.py").write_text(textwrap.dedent(script))
    started = time.monotonic()
    code, timed_out = run_process(
        [sys.executable, str(tmp_path / "trial.py"), str(tmp_path)], str(tmp_path), dict(os.environ),
        str(tmp_path), limit, 1, started,
    )  # fmt: skip
    return classify(str(tmp_path), code, timed_out, time.monotonic() - started)


def test_a_compile_cut_at_the_limit_is_a_hang_not_the_error_the_cut_raised(tmp_path):
    out = cut_at(tmp_path, 3.0, TRIAL)
    assert "the compiler exited" in json.loads((tmp_path / "result.json").read_text())["note"]  # raised as cut
    assert (out.kind, out.signature.kind) == ("hang", "hang")
    assert "subprocess.py" in out.traceback  # where it waited, dumped at the limit


def test_a_trial_that_answered_and_then_hung_at_exit_keeps_its_answer(tmp_path):
    """The other side of the rule: a result written before the limit (gloo's teardown hangs at exit) counts."""
    answered_then_hung = TRIAL.replace('subprocess.run(["sleep", "60"]).returncode', "1")
    out = cut_at(tmp_path, 3.0, answered_then_hung)
    assert (out.kind, out.signature.exc_type) == ("exception", "CppCompileError")
