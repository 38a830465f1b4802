"""Every option `reprokit bisect` takes, as one frozen value: a new bisect of a script or of a capture runs with it."""

from __future__ import annotations

from dataclasses import dataclass, fields

from reprokit.data.executor import ExecutorSettings

DEFAULT_INPUT_BYTES = 64 << 20


@dataclass(frozen=True)
class BisectRequest:
    """What the user asked of a bisect (the CLI's options); the script or capture it runs on is given beside it.
    budget: seconds the whole run may take (the verdict is always finished; what comes after it stops when they
    are spent); versions: the failure under other torch releases last."""

    output_dir: str | None = None
    timeout: float | None = None
    jobs: int | None = None
    repeat: int = 1
    check_accuracy: bool = False
    configs: bool = True
    subsystems: bool = True
    minify: bool = True
    pack: bool = True
    max_input_bytes: int = DEFAULT_INPUT_BYTES
    ranks: int = 1
    kind: str = "failure"
    slow_threshold: float = 0.10
    command: str = ""
    versions: bool = False
    executor: ExecutorSettings | None = None
    budget: float | None = None

    def changed(self) -> list[str]:
        """The options given other than their defaults, by field name."""
        default = BisectRequest()
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)]
