"""The script's own imports, loaded once in the warm worker (issue #50): a source reduction forks hundreds of
candidates of one script, and each imported numpy, transformers or whatever the script imports afresh.

Only what the script imports at its top level from outside its own folder (installed packages and the standard
library): a local module is the user's code, run at import, and a candidate may have cut what it reads. Each module
is first imported in a throwaway fork of the worker, and loaded only when that import succeeds and starts no thread
(a fork copies none of another thread's work, and a lock it held stays held), so a fork still starts as a fresh
interpreter would run the script, only with those imports done.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
import sys


def script_imports(script: str) -> tuple[str, ...]:
    """Modules `script` imports at its top level, in order, leaving out its own folder's modules and reprokit."""
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    folder = os.path.dirname(os.path.abspath(script))
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != "__future__":
            names.append(node.module)
    return tuple(
        dict.fromkeys(n for n in names if not _local(n.split(".")[0], folder) and n.split(".")[0] != "reprokit")
    )


def _local(top: str, folder: str) -> bool:
    return os.path.exists(os.path.join(folder, top + ".py")) or os.path.isdir(os.path.join(folder, top))


def load(names: tuple[str, ...] | list[str]) -> list[str]:
    """In the worker: import each module that a throwaway fork imported cleanly without starting a thread; the
    names loaded."""
    loaded = []
    for name in names:
        if name in sys.modules or not _imports_cleanly(name):
            continue
        with _quiet():
            try:
                importlib.import_module(name)
            except Exception:
                continue
        loaded.append(name)
    return loaded


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # no way to count them here: a module is then taken as starting none


def _imports_cleanly(name: str) -> bool:
    """Whether importing `name` succeeds and leaves no more threads than before, asked of a throwaway fork."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            before = _threads()
            with _quiet():
                importlib.import_module(name)
            code = 0 if _threads() <= before else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@contextlib.contextmanager
def _quiet():
    """Whatever an import prints goes nowhere: the worker's stdout is its pipe to the runner."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)
