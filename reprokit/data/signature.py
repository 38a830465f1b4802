"""Turn a raw failure (exception text, traceback frames, signal) into a comparable Signature."""
from __future__ import annotations

import re
import signal as _signal
from typing import Optional, Sequence

from reprokit.data.records import Signature

_PATTERNS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[^\s'\"():,]+)+"), "<path>"),
    (re.compile(r"\b(?:tmp|temp)[A-Za-z0-9_]+"), "<tmp>"),
    # A hash has letters and digits; a run of digits alone is a number (e.g. a float's fraction).
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b"), "<hash>"),
    # Numbers, but not digits inside identifiers (log1p, conv2d, float16 stay as they are).
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])"), "N"),
    (re.compile(r"\s+"), " "),
]


def normalise_message(message: str, limit: int = 200) -> str:
    """First meaningful line of an error message with numbers, addresses, paths and temp names removed."""
    line = ""
    for candidate in (message or "").splitlines():
        candidate = candidate.strip()
        if candidate and not candidate.startswith(("Set TORCHDYNAMO_VERBOSE", "from user code")):
            line = candidate
            break
    for pattern, repl in _PATTERNS:
        line = pattern.sub(repl, line)
    return line.strip()[:limit]


def innermost_torch_frame(frames: Sequence[tuple[str, str]], torch_root: str) -> Optional[str]:
    """'torch/<rel path>:<function>' of the deepest frame inside the torch package, if any.

    `frames` are (filename, function) pairs, outermost first. Line numbers are left out on purpose:
    they move with unrelated edits, the function does not.
    """
    root = torch_root.rstrip("/") + "/"
    for filename, func in reversed(list(frames)):
        if filename.startswith(root):
            return f"torch/{filename[len(root):]}:{func}"
    return None


def for_exception(exc_type: str, message: str, frames: Sequence[tuple[str, str]], torch_root: str) -> Signature:
    return Signature("exception", exc_type, normalise_message(message), innermost_torch_frame(frames, torch_root))


def for_signal(signum: int) -> Signature:
    try:
        name = _signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return Signature("crash", name, f"killed by {name}", None)


def for_exit(code: int) -> Signature:
    return Signature("exit", None, f"exit code {code}", None)


# Messages of CUDA faults that poison the context; the trial that meets one must end.
CUDA_FAULTS = ("device-side assert triggered", "an illegal memory access was encountered",
               "unspecified launch failure", "misaligned address")

PASS = Signature("pass")
HANG = Signature("hang", None, "timed out", None)
