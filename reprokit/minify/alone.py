"""repro.py and test_repro.py run as the user will run them: `python repro.py` in a fresh interpreter, in the
repro's folder, with nothing of reprokit's around it (no router, no start-up hook, no REPROKIT_* variable), judged
by its exit status and its own output (issue 46: a repro "verified" under reprokit's own check passed alone)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

from reprokit import settings
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.trial import reaper
from reprokit.trial.cache import compile_cache_root
from reprokit.trial.environment import PACKAGE_PARENT, trial_env
from reprokit.trial.scratch import scratch

NO_FAILURE = "no failure: the bug did not reproduce"
# A hang's repro.py says so itself past its limit (templates/repro.py.j2's watchdog) and exits 1.
HANG_SAID = re.compile(r"^still (compiling|running) after \d+ s: the hang reproduced", re.M)
HANG_GRACE = 60.0  # a hang's repro reports at its limit, counted from its start: the run alone waits this longer


def reported_hang(code, output: str) -> bool:
    """Whether a run alone of a hang's repro reported the hang itself: its watchdog's line, exit non-zero."""
    return code not in (0, None) and HANG_SAID.search(output) is not None


def user_env(run: RunDir) -> dict:
    """The user's environment with reprokit's variables and its package path taken out; only the compile cache
    the trials share is kept (a folder of kernels keyed by their source: trial/cache.py says why it hides no bug)."""
    env = trial_env(TrialSpec(mode="script", stage="user"), compile_cache_root(run.file("cache")), run.path)
    env = settings.without_reprokit(env, (PACKAGE_PARENT,))
    # Under CI=1 PyTorch's run_tests writes XML reports, which needs unittest-xml-reporting: the run here is about
    # the bug, not the report format.
    env.pop("CI", None)
    return env


def run_alone(run: RunDir, name: str, timeout: float, python: str) -> tuple:
    """Run `python NAME` in the run folder with the run's interpreter (RunFacts.python): (exit status, or None
    when it timed out; stdout and stderr; seconds)."""
    env, started = user_env(run), time.monotonic()
    with scratch(env) as env:
        p = subprocess.Popen(
            [python, name],
            cwd=run.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        reaper.watch(p.pid)  # Ctrl-C (Runner.cancel) or reprokit's end kills it too
        try:
            out, err = p.communicate(timeout=timeout)
            output, code = out + err, p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            output, code = f"{out or ''}{err or ''}\n[timed out after {timeout:.0f} s]", None
        finally:
            reaper.unwatch(p.pid)
    return code, output, round(time.monotonic() - started, 2)


def failed(code, output: str) -> bool:
    """Whether a run alone failed at all: it did not exit 0, and did not say the bug did not reproduce."""
    return code != 0 and NO_FAILURE not in output


def alone_signature(code, output: str, line: str) -> Signature:
    """What one run alone showed, as a signature: passes, timed out, a signal, or its last exception's line."""
    if not failed(code, output):
        return Signature("pass")
    if code is None or reported_hang(code, output):
        return Signature("hang", None, "timed out")
    if code < 0:
        return Signature("crash", line.removeprefix("killed by "))
    exc_type, _, message = line.partition(": ")
    return Signature("exception", exc_type.rsplit(".", 1)[-1] or None, message[:300])


RAN = "repro_run"  # the run folder's record of repro.py's first run alone, laid out as a trial's folder


def keep_run(run: RunDir, code, output: str, said: Signature) -> None:
    """repro.py's first run alone as ISSUE.md's decisive error reads a trial: its output and what it showed."""
    folder = run.file(RAN)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "stderr.txt"), "w") as f:
        f.write(output)
    run.write_json(
        os.path.join(RAN, "result.json"), {"kind": said.kind, "signature": said.to_dict(), "returncode": code}
    )
