"""Portable text: this machine's absolute paths replaced by placeholders a reader on another machine understands.

`<site-packages>` (installed packages, torch's headers among them), `<python>` (the interpreter's library),
`<python-executable>`, `<python-prefix>`, `<run-dir>` (reprokit's output folder), `<project>` (the script's folder),
`<cwd>` (where reprokit ran), `<inductor-cache>`, `<triton-cache>`, `<reprokit-cache>`, `<cache>`, `<reprokit>`,
`<home>`, `<tmp>`, and `<local>/NAME` for any other path under a machine root (/tmp, /home, ...).

Replacing is idempotent: one pass over the text, the longest path first at each position, a path only where a
path starts and ends (not `/tmp` inside `/tmp/tmp.x1`), and nothing right after a placeholder, so a text already
made portable is left as it is (a second pass once turned `/tmp/tmp.k745/out` into `<tmp><tmp>.k745/out`).

Every form takes the places as a value, (path, placeholder) pairs longest first (`places`): a pack reads its run's
places once and hands them to each text. `portable_text` replaces each path as a whole and once (the command in
repro.py's header and ISSUE.md), `portable_code` only in a Python text's comments (the code itself must still run).
"""

from __future__ import annotations

import functools
import html
import os
import re
import shlex
from collections.abc import Iterable

from reprokit.report.places import live_places, ordered, run_places

# Any absolute path left under these roots after the named places are replaced is still this machine's.
MACHINE_ROOTS = (
    "/tmp/",
    "/home/",
    "/root/",
    "/Users/",
    "/private/var/",
    "/var/folders/",
    "/scratch/",
    "/work/",
    "/opt/",
)
NAMES = (
    "run-dir",
    "project",
    "cwd",
    "reprokit",
    "python",
    "python-executable",
    "python-prefix",
    "site-packages",
    "inductor-cache",
    "triton-cache",
    "reprokit-cache",
    "cache",
    "home",
    "tmp",
    "local",
)
# A placeholder as written in text, or in HTML (tlparse's report) where a bare <name> would read as a tag.
PLACEHOLDER = re.compile(r"(?:<|&lt;)(" + "|".join(map(re.escape, NAMES)) + r")(?:>|&gt;)")
_ENDS_IN_PLACEHOLDER = re.compile(PLACEHOLDER.pattern + r"$")
# A path starts here: not inside a name, but right after a compiler's -I or -L (-I/venv/include/python3.11).
_BEFORE = r"(?:(?<![\w.@+~-])|(?<=-[IL]))"
_AFTER = r"(?![\w@+~-]|\.\w)"  # and ends here: /tmp but not /tmp.k745 or /tmpfoo (a sentence's full stop is fine)
# Any folder named site-packages, and inductor's own default cache or reprokit's per-machine one (trial/cache.py),
# wherever they are: found by their last part, then the path is taken back to where it starts (a regex that tried
# every earlier "/" as the start was quadratic: 8 s on a 200 kB line of base64).
SITE = re.compile(r"/(?:site|dist)-packages(?=/|\b)")
INDUCTOR_CACHE = re.compile(r"/(?:torchinductor_[^/\s\"'`]+|reprokit/compile/[^/\s\"'`]+/inductor)")
_NOT_PATH = set(" \t\n\r\f\v\"'`:()[]<>")
HOME_TILDE = re.compile(r"(?<![\w<>~^])~/")
MACHINE_PATH = re.compile(_BEFORE + r"(?:" + "|".join(re.escape(r) for r in MACHINE_ROOTS) + r")[^\s\"'`:()\[\]<>,;&]*")


def mark(name: str, in_html: bool = False) -> str:
    """A placeholder as text (<tmp>) or as HTML text (&lt;tmp&gt;)."""
    return html.escape(name) if in_html else name


# A named place longer than this is replaced even glued to what comes before it: two processes' crash reports
# interleaved in one stderr wrote "torch._C._fft/tmp/ci.x/reprokit/..." (CI at 4752c0d), the project's path after a
# module's name. A short one (/tmp, /root) still needs a path's start, or it would be found inside /data/tmp.
GLUED_MIN = 7


@functools.lru_cache(maxsize=32)
def _matcher(paths: tuple) -> re.Pattern | None:
    if not paths:
        return None
    long_ = "|".join(re.escape(p) for p in paths if len(p) >= GLUED_MIN)
    short = "|".join(re.escape(p) for p in paths if len(p) < GLUED_MIN)
    either = [f"(?:{long_})" if long_ else None, f"{_BEFORE}(?:{short})" if short else None]
    return re.compile("(?:" + "|".join(x for x in either if x) + ")" + _AFTER)


def _sub(pattern: re.Pattern, text: str, replace) -> str:
    """pattern replaced by replace(match), except right after a placeholder (that path is already portable)."""

    def one(m: re.Match) -> str:
        if _ENDS_IN_PLACEHOLDER.search(text, max(0, m.start() - 32), m.start()):
            return m.group(0)
        return replace(m)

    return pattern.sub(one, text)


def _sub_tail(pattern: re.Pattern, text: str, name: str, in_html: bool) -> str:
    """The paths that end in pattern's match replaced by name, from the path's first "/" (or "~/")."""
    out, pos = [], 0
    for m in pattern.finditer(text):
        start = m.start()
        while start > pos and text[start - 1] not in _NOT_PATH:
            start -= 1
        start = text.index("/", start, m.start() + 1)
        if start > pos and text[start - 1] == "~":
            start -= 1
        if _ENDS_IN_PLACEHOLDER.search(text, max(0, start - 32), start):
            continue
        out += [text[pos:start], mark(name, in_html)]
        pos = m.end()
    return "".join(out) + text[pos:]


def replace_places(text: str, pairs: list, in_html: bool = False) -> str:
    """text with every path of pairs ((path, placeholder), longest first) replaced, in one pass."""
    names = dict(pairs)
    matcher = _matcher(tuple(p for p, _ in pairs))
    if matcher is None or not any(p in text for p in names):
        return text
    return _sub(matcher, text, lambda m: mark(names[m.group(0)], in_html))


def portable_with(text: str, pairs: list, in_html: bool = False) -> str:
    """text with the named places of pairs, then any other path of this machine, replaced by placeholders."""
    text = _sub_tail(SITE, text, "<site-packages>", in_html)
    text = _sub_tail(INDUCTOR_CACHE, text, "<inductor-cache>", in_html)
    text = replace_places(text, pairs, in_html)
    text = _sub(HOME_TILDE, text, lambda m: mark("<home>", in_html) + "/")
    return _sub(MACHINE_PATH, text, lambda m: mark("<local>", in_html) + "/" + os.path.basename(m.group(0).rstrip("/")))


# A placeholder and the path after it: text already portable, left as it is.
PLACED = re.compile(r"<[\w-]+>(?:/[^\s\"'`:()\[\]<>,;]*)?")
PATH = re.compile(r"(?<![\w<>.~-])/[^\s\"'`:()\[\]<>,;=]*")
SHELL_SAFE = re.compile(r"^[\w@%+=:,./<>-]+$")


def places(run_dir: str | None = None, project: str | None = None) -> list:
    """(path, placeholder) pairs, longest path first: a run folder's recorded places (its machine's, not this
    shell's: the pack is the same from any shell), else this shell's."""
    if run_dir:
        return ordered([("<project>", [project])] + [(n, [p]) for p, n in run_places(run_dir)])
    return ordered([("<project>", [project])] + list(live_places().items()))


def portable(text: str, run_dir: str | None = None, project: str | None = None, extra: Iterable = ()) -> str:
    """text with every absolute path of this machine replaced by a placeholder."""
    return portable_with(text, ordered([(n, [p]) for p, n in list(extra) + places(run_dir, project)]))


def portable_text(text: str, known: list) -> str:
    """text with the places of known, each path replaced as a whole and once, placeholders already there left alone
    (portable_with substitutes each place over the whole text, so a place met again inside a later component was
    replaced too: /tmp/tmp.k745IDc1wV/out became <tmp><tmp>.k745IDc1wV/out)."""
    text = INDUCTOR_CACHE.sub("<inductor-cache>", SITE.sub("<site-packages>", text))
    text = PATH.sub(lambda m: _placed(m.group(0), known), text)
    out, at = [], 0
    for m in PLACED.finditer(text):
        out += [portable_with(text[at : m.start()], known), m.group(0)]
        at = m.end()
    return "".join(out) + portable_with(text[at:], known)


def _placed(path: str, known: list) -> str:
    for place, name in known:
        if path == place or path.startswith(place + "/"):
            return name + path[len(place) :]
    return path


def portable_command(command: str | None, known: list | None = None) -> str:
    """command with every path in it portable (known: a run's places; None: this shell's), each word quoted only
    where a shell needs it."""
    if not command:
        return "reprokit"
    known = places() if known is None else known
    try:
        words = shlex.split(command)
    except ValueError:
        return portable_text(command, known)
    return " ".join(w if SHELL_SAFE.match(w) else shlex.quote(w) for w in (portable_text(w, known) for w in words))


def portable_code(text: str, known: list) -> str:
    """Python text with this machine's paths replaced in its comments only (the code itself must still run)."""
    return "\n".join(portable_text(l, known) if l.lstrip().startswith("#") else l for l in text.split("\n"))


def placeholders_in(text: str) -> list:
    """The kinds of place named in text (home, tmp, site-packages ...), sorted: what MANIFEST.json lists."""
    return sorted({m.group(1) for m in PLACEHOLDER.finditer(text)})


def machine_paths(text: str) -> list:
    """The absolute paths of this machine still in text (what portable() missed): for tests and checks."""
    return [m.group(0) for m in MACHINE_PATH.finditer(text)] + SITE.findall(text) + HOME_TILDE.findall(text)
