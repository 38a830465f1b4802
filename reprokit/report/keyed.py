"""The values of secret-named variables, kept as keyed hashes so that a later `pack` redacts them from any shell.

Why keyed hashes and not scrubbing the logs as trials write them: the trial layer and the script keep their output
as it was (a failure is judged on the raw text, and the run folder is the user's private debugging record: 0600,
ignored by git), and the pack also reads files at pack time (the script, the modules it imported, the git diff)
that no capture-time scrubber sees. So bisect records, per secret-named variable, the HMAC-SHA256 of its value
under a random key of the run (secret.key, mode 0600, never packed) and the value's length; pack hashes every
window of those lengths that starts and ends at a token boundary, and redacts the windows whose hash is recorded. No value is written,
and the pack no longer depends on the environment of the shell that runs it.
"""

from __future__ import annotations

import hmac
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from reprokit.report.redact_rules import SECRET_NAME

KEY_FILE = "secret.key"
RECORD_FILE = "secrets.json"
MIN_LENGTH = 6  # shorter values ("1", "on") would redact ordinary words and numbers
# A value is looked for where a token starts and ends: at the text's ends, a separator, or an escape such as \n
# in JSON. Candidate windows are (token start, token end) pairs of a recorded length, found with numpy when it is
# there; only distinct windows are hashed, so a large log costs little.
_TOKEN = re.compile(r"[^\s\"'`=:,;()\[\]{}<>@/|&?#!.\\]+")


def _candidates(text: str, lengths: tuple) -> list:
    """(start, end) of every window of a recorded length from a token's start to a token's end."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    starts = [s for s, _ in spans]
    ends = [e for _, e in spans]
    for s, e in spans:
        if s and text[s - 1] == "\\" and text[s] in "ntr":
            starts.append(s + 1)  # "\\nVALUE" in JSON: the value after the escape
        elif s and text[s - 1] in "/.!#?&@":
            starts.append(s - 1)  # a value that starts with a separator: /tmp/..., .x
        if text[e : e + 1] == "=":  # base64 padding
            ends += [e + 1] + ([e + 2] if text[e + 1 : e + 2] == "=" else [])
    try:
        import numpy as np
    except ImportError:
        end_set = set(ends)
        return [(s, s + n) for n in lengths for s in starts if s + n in end_set]
    start_arr, end_arr = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    out = []
    for n in lengths:
        out += [(int(s), int(s) + n) for s in start_arr[np.isin(start_arr + n, end_arr)]]
    return out


def _private_write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def record(run_path: str, env: Mapping[str, str] | None = None, identity: dict | None = None) -> None:
    """Write secret.key and secrets.json: names, lengths and keyed hashes of secret-named variables' values."""
    env = os.environ if env is None else env
    key = os.urandom(32)
    _private_write(os.path.join(run_path, KEY_FILE), key)
    variables = {
        name: {"length": len(value), "hmac": _mac(key, value)}
        for name, value in sorted(env.items())
        if SECRET_NAME.search(name) and len(value) >= MIN_LENGTH
    }
    # Where the run folder was made: its paths in the logs name it even when the folder is packed from elsewhere.
    identity = {**(identity or {}), "run_dir": os.path.abspath(run_path)}
    body = {"algorithm": "hmac-sha256", "variables": variables, "identity": identity}
    _private_write(os.path.join(run_path, RECORD_FILE), (json.dumps(body, indent=2, sort_keys=True) + "\n").encode())


def _mac(key: bytes, value: str) -> str:
    return hmac.digest(key, value.encode("utf-8", "surrogateescape"), "sha256").hex()


@dataclass
class KeyedSecrets:
    """The recorded hashes of one run, and the search for their values in a text."""

    key: bytes
    hashes: frozenset
    lengths: tuple
    identity: dict

    @classmethod
    def load(cls, run_path: str) -> KeyedSecrets | None:
        """None for a run folder recorded before keyed hashes (or without its key)."""
        try:
            with open(os.path.join(run_path, KEY_FILE), "rb") as f:
                key = f.read()
            with open(os.path.join(run_path, RECORD_FILE)) as f:
                body = json.load(f)
        except (OSError, ValueError):
            return None
        variables = body.get("variables") or {}
        return cls(
            key=key,
            hashes=frozenset(v["hmac"] for v in variables.values()),
            lengths=tuple(sorted({v["length"] for v in variables.values()}, reverse=True)),
            identity=body.get("identity") or {},
        )

    def spans(self, text: str) -> list:
        """(start, end) of every recorded value in text, longest first where two overlap."""
        if not self.hashes:
            return []
        found: list[tuple[int, int]] = []
        seen: dict[str, bool] = {}
        for start, end in _candidates(text, self.lengths):
            window = text[start:end]
            hit = seen.get(window)
            if hit is None:
                hit = seen[window] = _mac(self.key, window) in self.hashes
            if hit:
                found.append((start, end))
        return found
