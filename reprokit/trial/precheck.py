"""The parent's side of the fake-tensor check of graph cuts (child/precheck.py): one long-lived process per graph,
asked about each cut before a trial is spent on it. It may never make a wrong answer, only a cheaper one: a cut it
cannot run on fakes is one no trial could fail the original's way with, and when the checker cannot check this
graph, dies, or takes too long, every cut gets its trial as before."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time

from reprokit.data.records import TrialSpec
from reprokit.trial import reaper
from reprokit.trial.environment import trial_env

START_SECONDS = 120.0  # importing torch, the script's prelude, the whole graph once on fakes
CHECK_SECONDS = 30.0  # one cut on fakes: milliseconds for graphs of hundreds of nodes


class FakeCheck:
    """The checker of one captured graph, started at the first question. refusal(edit) is why the edit cannot run
    on fake tensors, or None (it can, or the checker cannot tell)."""

    def __init__(self, case: str, cache_root: str, folder: str):
        self.case, self.cache_root, self.folder = os.path.abspath(case), cache_root, folder
        self.proc: subprocess.Popen | None = None
        self.unusable: str | None = None  # why no cut is checked (said once, in the run's notes)
        self.asked = self.refused = 0
        self._lock = threading.Lock()

    def refusal(self, edit: dict) -> str | None:
        with self._lock:
            if self.unusable is None and self.proc is None:
                self._start()
            if self.unusable is not None:
                return None
            reply = self._ask(json.dumps(edit))
            if reply is None:
                return None
            self.asked += 1
            if reply.get("ok", True):
                return None
            self.refused += 1
            return str(reply.get("why") or "does not run on fake tensors")

    def _start(self) -> None:
        os.makedirs(self.folder, exist_ok=True)
        env = trial_env(TrialSpec(mode="graph", stage="eager", case=self.case), self.cache_root, self.folder)
        with open(os.path.join(self.folder, "stderr.txt"), "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "reprokit.child.precheck", self.case],
                env=env,
                cwd=self.folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
                preexec_fn=reaper.die_with_parent,
            )
        reaper.watch(self.proc.pid)  # it dies with reprokit, however that ends
        first = self._read(START_SECONDS)
        if first is None:
            self._stop(f"the checker did not start within {START_SECONDS:.0f} s")
        elif not first.get("ready"):
            self._stop(f"the whole graph does not run on fake tensors ({first.get('why')})")

    def _ask(self, line: str) -> dict | None:
        assert self.proc is not None and self.proc.stdin is not None  # started, with a pipe
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            self._stop("the checker died")
            return None
        reply = self._read(CHECK_SECONDS)
        if reply is None:
            self._stop(f"a check took over {CHECK_SECONDS:.0f} s, or the checker died")
        return reply

    def _read(self, seconds: float) -> dict | None:
        """One JSON line from the checker within `seconds`, else None."""
        deadline = time.monotonic() + seconds
        assert self.proc is not None and self.proc.stdout is not None  # started, with a pipe
        out = self.proc.stdout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([out], [], [], left)[0]:
                return None
            line = out.readline()
            if not line:
                return None
            try:
                return json.loads(line)
            except ValueError:
                continue  # a stray print of the script's prelude

    def _stop(self, why: str) -> None:
        if self.unusable is None:
            self.unusable = why
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            reaper.unwatch(self.proc.pid)

    def close(self) -> None:
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                self._stop(self.unusable or "closed")
