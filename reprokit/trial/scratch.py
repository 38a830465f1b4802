"""A trial's own temporary folder, its TMPDIR, removed when the trial ends.

What a trial's processes leave in the temporary folder stays there when they are killed: g++'s intermediate files of
a compile cut at a time limit, and every AOTInductor package a trial loads, unpacked into `aotinductor_*` (1.7 MB
each) and removed only by a destructor that a process ending in os._exit or SIGKILL never runs. Two days of this
suite left 748 such folders (1.3 GB) and 257 g++ files in /tmp. Each trial gets a fresh folder inside the user's
own temporary folder (a cluster node's local one for a SLURM trial); it goes when the trial ends, or with the
reaper when reprokit dies first.

Inductor also derives a cache from the temporary folder: its precompiled C++ headers, under `torchinductor_<user>`
(read at import, whatever TORCHINDUCTOR_CACHE_DIR says). That name in the trial's folder links to the one the user's
own runs use, so a cold trial does not build the headers again.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import os
import re
import shutil
import tempfile
from collections.abc import Iterator

from reprokit import settings
from reprokit.trial import reaper

PREFIX = "reprokit-tmp-"


@contextlib.contextmanager
def scratch(env: dict) -> Iterator[dict]:
    """`env` with TMPDIR set to a new folder for the block's processes; the folder is removed after the block."""
    base = settings.TMPDIR.get(env=env) or tempfile.gettempdir()
    try:
        path = tempfile.mkdtemp(prefix=PREFIX, dir=base)
    except OSError:
        path = tempfile.mkdtemp(prefix=PREFIX)  # the environment's TMPDIR does not exist here: this machine's own
    reaper.watch_folder(path)
    # Beside the folder actually made: where the environment's TMPDIR is missing here (a node's differs from the
    # submit host's) it is not created just to hold the link.
    shared = os.path.join(os.path.dirname(path), _inductor_default_name())
    try:
        os.makedirs(shared, exist_ok=True)
        os.symlink(shared, os.path.join(path, _inductor_default_name()))
    except OSError:
        pass  # the trial builds its own headers: slower, the same answer
    try:
        yield {**env, "TMPDIR": path}
    finally:
        shutil.rmtree(path, ignore_errors=True)
        reaper.unwatch_folder(path)


@functools.cache
def _inductor_default_name() -> str:
    """The folder inductor's default cache takes in the temporary folder (torch's cache_dir_utils names it so)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}"
    return "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)
