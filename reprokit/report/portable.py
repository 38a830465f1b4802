"""Portable text: this machine's absolute paths replaced by placeholders a reader on another machine understands.

`<site-packages>` (installed packages, torch's headers among them), `<python>` (the interpreter's library),
`<run-dir>` (reprokit's output folder), `<project>` (the script's folder), `<inductor-cache>`, `<reprokit>`,
`<home>`, `<tmp>`, and `<local>/NAME` for any other path under a machine root (/tmp, /home, ...).
"""
from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
from typing import Iterable, Optional

# Any absolute path left under these roots after the named places are replaced is still this machine's.
MACHINE_ROOTS = ("/tmp/", "/home/", "/root/", "/Users/", "/private/var/", "/var/folders/", "/scratch/", "/work/",
                 "/opt/")
SITE = re.compile(r"~?(?:/[^\s\"'`:()\[\]<>]+)?/(?:site|dist)-packages(?=/|\b)")
# inductor's own default cache, or reprokit's per-machine one (trial/cache.py).
INDUCTOR_CACHE = re.compile(r"~?(?:/[^\s\"'`:()\[\]<>]+)?/"
                            r"(?:torchinductor_[^/\s\"'`]+|reprokit/compile/[^/\s\"'`]+/inductor)")
HOME_TILDE = re.compile(r"(?<![\w<>~^])~/")
MACHINE_PATH = re.compile(r"(?<![\w<>.~-])(?:" + "|".join(re.escape(r) for r in MACHINE_ROOTS)
                          + r")[^\s\"'`:()\[\]<>,;]*")


def places(run_dir: Optional[str] = None, project: Optional[str] = None) -> list:
    """(path, placeholder) pairs, longest path first so the most specific name wins."""
    reprokit_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pairs = [(run_dir, "<run-dir>"), (project, "<project>"), (reprokit_dir, "<reprokit>"),
             (sysconfig.get_paths().get("stdlib"), "<python>"), (sys.prefix, "<python-prefix>"),
             (os.path.expanduser("~"), "<home>"), (tempfile.gettempdir(), "<tmp>")]
    found = {}
    for path, name in pairs:
        if path and len(path) > 1:
            for p in {os.path.abspath(path), os.path.realpath(path)}:
                found.setdefault(p.rstrip("/"), name)
    return sorted(found.items(), key=lambda kv: -len(kv[0]))


def portable(text: str, run_dir: Optional[str] = None, project: Optional[str] = None,
             extra: Iterable = ()) -> str:
    """text with every absolute path of this machine replaced by a placeholder."""
    text = SITE.sub("<site-packages>", text)
    text = INDUCTOR_CACHE.sub("<inductor-cache>", text)
    for path, name in list(extra) + places(run_dir, project):
        text = re.sub(re.escape(path) + r"(?=/|\b|$)", name, text)
    text = HOME_TILDE.sub("<home>/", text)  # the redactor writes the home folder as ~
    return MACHINE_PATH.sub(lambda m: "<local>/" + os.path.basename(m.group(0).rstrip("/")), text)


def machine_paths(text: str) -> list:
    """The absolute paths of this machine still in text (what portable() missed): for tests and checks."""
    return [m.group(0) for m in MACHINE_PATH.finditer(text)] + SITE.findall(text) + HOME_TILDE.findall(text)
