"""What a bisect run recorded in run.json that its minify phase needs, as one value: the app builds it from the
record it writes (or, for a later command on a finished folder, from the run.json it reads once at its top) and
hands it down, so nothing below the app reads back a file the same run wrote (issue 49)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

DEFAULT_INPUT_BYTES = 64 << 20  # a folder whose run.json records no --max-input-bytes (a capture's)


@dataclass(frozen=True)
class RunFacts:
    """python: the interpreter the run's script ran under (repro.py runs alone with it); options: run.json's
    "options" (the BisectOptions as recorded); command: the command line the user typed; capture: bisect
    --from-capture's {"from", "rank", "case", "phase", "kind"}, else None; minified: minify.json as an earlier
    command left it in the folder (`minify --resume` starts from it; a resumed bisect's evidence names its case)."""

    python: str
    options: dict
    command: str = ""
    max_input_bytes: int = DEFAULT_INPUT_BYTES
    capture: dict | None = None
    minified: dict | None = None

    @classmethod
    def of(cls, record: dict, minified: dict | None = None) -> RunFacts:
        """The facts of a run.json record, as written or as read back by a later command."""
        return cls(
            python=record.get("python") or sys.executable,
            options=record.get("options") or {},
            command=record.get("command", ""),
            max_input_bytes=record.get("max_input_bytes", DEFAULT_INPUT_BYTES),
            capture=record.get("capture"),
            minified=minified,
        )

    @property
    def cwd(self) -> str:
        """The folder the bisect ran the script in."""
        return self.options["cwd"]

    @property
    def ranks(self) -> int:
        return self.options.get("ranks") or 1

    @property
    def capture_phase(self) -> str | None:
        """Where the captured job failed ("compile", "run", "backward"); None for a script's bisect."""
        return (self.capture or {}).get("phase")
