"""Portable text whose paths are replaced each as a whole, once: the command in repro.py's header and ISSUE.md.

portable() substitutes each place over the whole text, so a place's name met again inside a later component is
replaced too (/tmp/tmp.k745IDc1wV/out became <tmp><tmp>.k745IDc1wV/out), and text already made portable changes
when it goes through again. Here each path gets its longest place once, and placeholders are left alone."""

from __future__ import annotations

import re
import shlex

from reprokit.report.portable import INDUCTOR_CACHE, SITE, places, portable

# A placeholder and the path after it: text already portable, left as it is.
PLACED = re.compile(r"<[\w-]+>(?:/[^\s\"'`:()\[\]<>,;]*)?")
PATH = re.compile(r"(?<![\w<>.~-])/[^\s\"'`:()\[\]<>,;=]*")
SHELL_SAFE = re.compile(r"^[\w@%+=:,./<>-]+$")


def portable_command(command: str | None, run_dir: str | None = None, project: str | None = None) -> str:
    """command with every path in it portable, each word quoted only where a shell needs it."""
    if not command:
        return "reprokit"
    try:
        words = shlex.split(command)
    except ValueError:
        return portable_text(command, run_dir, project)
    return " ".join(
        w if SHELL_SAFE.match(w) else shlex.quote(w) for w in (portable_text(w, run_dir, project) for w in words)
    )


def portable_text(text: str, run_dir: str | None = None, project: str | None = None) -> str:
    """portable(text), each path replaced as a whole and once, placeholders already there left alone."""
    text = INDUCTOR_CACHE.sub("<inductor-cache>", SITE.sub("<site-packages>", text))
    known = places(run_dir, project)
    text = PATH.sub(lambda m: _placed(m.group(0), known), text)
    out, at = [], 0
    for m in PLACED.finditer(text):
        out += [portable(text[at : m.start()], run_dir, project), m.group(0)]
        at = m.end()
    return "".join(out) + portable(text[at:], run_dir, project)


def _placed(path: str, known: list) -> str:
    for place, name in known:
        if path == place or path.startswith(place + "/"):
            return name + path[len(place) :]
    return path
