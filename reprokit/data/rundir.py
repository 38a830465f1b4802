"""The run folder: a fresh directory per run, atomic writes, and the trial journal (cache + resume)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import tempfile
import threading

from reprokit.errors import ReprokitError

PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700
# The run's verdict: written by app/verdict_file alone, read through RunDir.verdict(); a pack copies it.
VERDICT_FILE = "verdict.json"

IGNORE_ALL = "# written by reprokit: raw run folders may hold secrets and data; never commit them\n*\n"


def private_opener(path: str, flags: int) -> int:
    """open(..., opener=private_opener): a new file is created 0600 whatever the umask."""
    return os.open(path, flags, PRIVATE_FILE)


def ignored_by_git(folder: str) -> None:
    """A .gitignore of `*` in folder (kept when one is there), so `git add -A` in the user's project skips it."""
    path = os.path.join(folder, ".gitignore")
    if not os.path.exists(path):
        with open(path, "w", opener=private_opener) as f:
            f.write(IGNORE_ALL)


def write_atomic(path: str, data: str | bytes) -> None:
    """Write a file so that readers see the old content or the new, never a torn one."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), PRIVATE_DIR, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".tmp-")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, PRIVATE_FILE)  # raw logs and inputs may hold secrets: the owner's alone
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str, obj) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def read_json(path: str):
    with open(path) as f:
        return json.load(f)


def read_json_dict(path: str) -> dict | None:
    """The JSON object at path, or None when it is missing, unreadable or not an object (a folder a job left)."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "run"


class RunDir:
    """artifacts/<utc>-<name>/ with journal.jsonl, trials/, cache/ and the run's JSON files."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self._lock = threading.Lock()

    @classmethod
    def create(cls, base: str, name: str, now: _dt.datetime | None = None) -> RunDir:
        now = now or _dt.datetime.now(_dt.UTC)
        stamp = now.strftime("%Y-%m-%dT%H-%M-%S")
        try:
            os.makedirs(base, PRIVATE_DIR, exist_ok=True)
            ignored_by_git(base)
            probe = tempfile.NamedTemporaryFile(dir=base, prefix=".probe-", delete=True)
            probe.close()
        except OSError as e:
            raise ReprokitError(
                f"cannot write to output dir {base}: {e.strerror}; pass --output-dir to a writable folder"
            ) from None
        for n in range(1000):
            path = os.path.join(base, f"{stamp}-{_slug(name)}" + (f"-{n}" if n else ""))
            try:
                os.makedirs(path, PRIVATE_DIR)
                os.chmod(path, PRIVATE_DIR)  # whatever the umask
                ignored_by_git(path)
                return cls(path)
            except FileExistsError:
                continue
        raise ReprokitError(f"cannot create a fresh run folder under {base}")

    @classmethod
    def open(cls, path: str) -> RunDir:
        if not os.path.isfile(os.path.join(path, "run.json")):
            raise ReprokitError(f"{path} is not a reprokit run folder (no run.json); pass the folder bisect printed")
        return cls(path)

    def file(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def write_json(self, name: str, obj) -> None:
        write_json_atomic(self.file(name), obj)

    def write_text(self, name: str, text: str) -> None:
        write_atomic(self.file(name), text)

    def read_json(self, name: str):
        return read_json(self.file(name))

    def exists(self, name: str) -> bool:
        return os.path.exists(self.file(name))

    def verdict(self) -> dict | None:
        """The run's verdict as last written, or None before the first."""
        return self.read_json(VERDICT_FILE) if self.exists(VERDICT_FILE) else None

    def trial_dir(self, key: str, label: str) -> str:
        path = self.file("trials", f"{_slug(label)[:60]}-{key}")
        os.makedirs(path, PRIVATE_DIR, exist_ok=True)
        return path

    # -- journal -------------------------------------------------------------------------------
    def journal_append(self, entry: dict) -> None:
        line = json.dumps(entry, sort_keys=True, default=str) + "\n"
        with self._lock:
            with open(self.file("journal.jsonl"), "a", opener=private_opener) as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())

    def journal(self) -> list[dict]:
        path = self.file("journal.jsonl")
        if not os.path.exists(path):
            return []
        out = []
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # a torn last line from a crash: everything before it stands
        return out
