"""A kernel binary left half-written in the shared compile cache by a trial that was killed while linking it.

Inductor compiles a kernel straight to its final path and, on a later run, loads any file already there
(codecache._worker_compile_cpp checks only that it exists). reprokit kills trials as a matter of course: the losers
of a parallel round, a timeout, Ctrl-C. A trial killed while the linker writes leaves a truncated .so in the
cache (trial/cache.py) that every later trial compiling the same source then fails to load ("file too short"),
a failure of reprokit's own making that would otherwise be judged as the script's. Worse, a half-written binary
of inductor's vector-ISA probe fails silently: every later compile then emits scalar code, and a bug in the
vectorized path no longer shows. So a run first sweeps such binaries away (sweep), and a trial that still meets
one (written by a trial killed during this run) is run again without it (damaged_binary).

An AOTInductor package is written the same way, in place (package_aoti, at a path named by the graph's hash in
the shared cache, or the script's own package_path): a trial loading it while another trial, of this run or of a
run beside it, rewrites it fails to open the archive (half_written_package). It is run again; nothing is removed,
the writer finishes it.
"""

from __future__ import annotations

import os
import re
import struct
import time

from reprokit.data.records import Outcome

# What the dynamic loader says of a file that is not a whole shared object.
_UNLOADABLE = re.compile(
    r"(/[^\s:'\"]+?\.so): (?:file too short|invalid ELF header|"
    r"ELF load command (?:past end of file|address/offset not page-aligned)|"
    r"cannot read file data)"
)


def damaged_binary(outcome: Outcome, cache_root: str) -> str | None:
    """The cache's binary this trial failed to load because it is not whole, or None."""
    if not outcome.failed or not cache_root:
        return None
    root = os.path.realpath(cache_root) + os.sep
    text = "\n".join((outcome.signature.message or "", outcome.signature.cause or "", outcome.traceback or ""))
    for path in _UNLOADABLE.findall(text):
        if os.path.realpath(path).startswith(root) and os.path.isfile(path):
            return path
    return None


# What aoti_load_package says of an archive another process is writing.
_UNREADABLE_ARCHIVE = re.compile(
    r"Failed to initialize zip archive|Failed to extract zip file|"
    r"PytorchStreamReader failed"
)


def half_written_package(outcome: Outcome) -> bool:
    """True when the trial failed opening an AOTInductor package's archive, as one mid-write fails."""
    if not outcome.failed:
        return False
    text = "\n".join((outcome.signature.message or "", outcome.traceback or ""))
    return bool(_UNREADABLE_ARCHIVE.search(text)) and "load_package" in text


def remove(path: str) -> None:
    """The damaged binary gone, so that the next compile of that source writes it anew."""
    try:
        os.unlink(path)
    except FileNotFoundError:  # another trial removed it first
        pass


# A link in progress looks cut short too: only binaries older than this are judged.
SETTLED_SECONDS = 300


def sweep(cache_root: str, settled: float = SETTLED_SECONDS) -> list:
    """Remove the cache's shared objects that are not whole ELF files; the paths removed."""
    removed, now = [], time.time()
    for folder, _, names in os.walk(cache_root):
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(".so") and not _whole_elf(path, now - settled):
                remove(path)
                removed.append(path)
    return removed


def _whole_elf(path: str, settled_before: float) -> bool:
    """False for a settled file that is not an ELF object as long as its own section table says it is."""
    try:
        st = os.stat(path)
        if st.st_mtime > settled_before:
            return True
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return True
    if len(head) < 52 or head[:4] != b"\x7fELF":
        return False
    end = "<" if head[5] == 1 else ">"
    if head[4] == 2:  # 64-bit: e_shoff at 0x28, e_shentsize and e_shnum at 0x3A
        if len(head) < 64:
            return False
        (shoff,), (shentsize, shnum) = (
            struct.unpack_from(end + "Q", head, 0x28),
            struct.unpack_from(end + "HH", head, 0x3A),
        )
    else:  # 32-bit: e_shoff at 0x20, e_shentsize and e_shnum at 0x2E
        (shoff,), (shentsize, shnum) = (
            struct.unpack_from(end + "I", head, 0x20),
            struct.unpack_from(end + "HH", head, 0x2E),
        )
    return st.st_size >= shoff + shentsize * shnum
