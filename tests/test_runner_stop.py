"""A signal's Runner.stop(): the trial running is killed with no answer, and a trial waiting for its slot then never
starts (on a cluster it would run its whole limit). Real trial processes."""

import threading
import time

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial.cancel import TrialsCancelled
from reprokit.trial.runner import Runner

HELD = """import os, sys, time
open({running!r}, "w").close()
while os.path.exists({hold!r}):
    time.sleep(0.05)
"""


def test_stop_kills_the_running_trial_and_the_one_waiting_for_its_slot_never_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "0")
    (tmp_path / "hold").touch()
    (tmp_path / "held.py").write_text(HELD.format(running=str(tmp_path / "running"), hold=str(tmp_path / "hold")))
    started: list = []
    runner = Runner(
        RunDir.create(str(tmp_path / "artifacts"), "held"), timeout=300, jobs=1, on_start=lambda s: started.append(s)
    )
    said: dict = {}

    def ask(label: str, attempt: int) -> None:
        spec = TrialSpec("script", "none", str(tmp_path / "held.py"), cwd=str(tmp_path), label=label, attempt=attempt)
        try:
            said[label] = runner(spec).kind
        except TrialsCancelled as e:
            said[label] = str(e)

    asking = [threading.Thread(target=ask, args=(label, n)) for n, label in enumerate(["first", "second"])]
    try:
        asking[0].start()
        deadline = time.monotonic() + 120
        while not (tmp_path / "running").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        asking[1].start()
        time.sleep(0.5)  # the second waits for the only slot
        runner.stop()
        for t in asking:
            t.join(30)
    finally:
        (tmp_path / "hold").unlink()
        runner.close()
    assert said == {"first": "first stopped with the run", "second": "second not started: the run is stopping"}
    assert [s.label for s in started] == ["first"]
    assert runner.run_dir.journal() == []
