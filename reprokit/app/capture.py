"""`reprokit capture --output-dir DIR -- CMD ...`: the user's command run exactly as given, every python process
of it recording into DIR through the start-up hook (REPROKIT_CAPTURE); its output and exit status are its own."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass

from reprokit import settings
from reprokit.app import guards
from reprokit.bisect.capture_folder import crashed_ranks, failing_ranks
from reprokit.capture.arm import DEFAULT_MAX_INPUT_BYTES
from reprokit.capture.files import CAPTURE_VAR, MAX_BYTES_VAR, SUMMARY
from reprokit.child.ranks import HOOK_DIR
from reprokit.errors import ReprokitError


@dataclass(frozen=True)
class CaptureRun:
    """How the captured command ended, and what the capture holds."""

    exit_status: int
    seconds: float
    output_dir: str
    failures: tuple  # rank folders holding a failure.json, else those of ranks that died by a signal in a graph
    fault_reports: tuple = ()  # faulthandler's report of each crashed rank (the capture took faulthandler over)


def capture_command(output_dir: str, command: tuple, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> CaptureRun:
    """Run `command` with the recorder armed in every python process it starts; nothing of the environment is
    written (the recorder writes graphs, inputs and the failure only)."""
    if not command:
        raise ReprokitError(
            "pass the command to capture after --: reprokit capture --output-dir DIR -- python train.py"
        )
    guards.not_negative("--max-input-bytes", max_input_bytes, "a size in bytes")
    root = os.path.abspath(output_dir)
    try:
        os.makedirs(root, 0o700, exist_ok=True)
    except OSError as e:
        raise ReprokitError(f"cannot write to {root}: {e.strerror}; pass --output-dir to a writable folder") from None
    paths = [p for p in settings.PYTHONPATH.get("").split(os.pathsep) if p and p != HOOK_DIR]
    env = {
        **os.environ,
        CAPTURE_VAR: root,
        MAX_BYTES_VAR: str(max_input_bytes),
        "PYTHONPATH": os.pathsep.join([HOOK_DIR, *paths]),
    }
    started = time.monotonic()
    try:
        status = subprocess.call(list(command), env=env)
    except FileNotFoundError:
        raise ReprokitError(f"no such command: {command[0]}") from None
    seconds = round(time.monotonic() - started, 2)
    failures = tuple(f"rank{r}" for r in failing_ranks(root))
    crashes = crashed_ranks(root)
    failures = failures or tuple(f"rank{r}" for r in crashes)  # died by a signal
    if not os.path.exists(os.path.join(root, SUMMARY)):  # no process compiled anything: still a summary
        from reprokit.capture.summary import merge_summary

        merge_summary(root, "launcher", {"graphs": 0, "compiles": 0, "failed": False, "seconds": seconds})
    return CaptureRun(
        status if status >= 0 else 128 - status,
        seconds,
        root,
        failures,
        tuple(c["traceback"] for c in crashes.values()),
    )
