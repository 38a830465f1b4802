"""The places of the machine a run was made on (interpreter, packages, temp and cache folders, home, the run's own
folders) and the placeholders that name them in a pack.

Why recorded and not read at pack time: a pack must be the same bytes from any shell (report/keyed.py), and a
later shell may have another TMPDIR, virtual environment or home. So bisect records this machine's places beside
the keyed secrets (secrets.json's identity, never packed) and the pack reads them back; a run folder recorded
before that falls back to the live places of the shell that packs it.
"""

from __future__ import annotations

import getpass
import json
import os
import site
import sys
import sysconfig
import tempfile
from collections.abc import Iterable

from reprokit import settings
from reprokit.data.rundir import VERDICT_FILE
from reprokit.trial.cache import compile_cache_root

RECORD_FILE = "secrets.json"  # keyed.RECORD_FILE: where the identity of the run's machine is kept
# Prefixes of a system interpreter: shared by every machine, so naming them would only hide compiler paths.
SYSTEM_PREFIXES = ("/", "/usr", "/usr/local")


def live_places() -> dict:
    """{placeholder: [paths]} of this interpreter and shell: what bisect records for the pack."""
    home = os.path.expanduser("~")
    cache = settings.XDG_CACHE_HOME.get() or os.path.join(home, ".cache")
    tmp = tempfile.gettempdir()
    compiled = compile_cache_root("")
    paths = sysconfig.get_paths()
    return _resolved(
        {
            "<site-packages>": [
                *getattr(site, "getsitepackages", list)(),
                site.getusersitepackages(),
                paths.get("purelib"),
                paths.get("platlib"),
            ],
            "<python>": [paths.get("stdlib"), paths.get("platstdlib")],
            "<python-executable>": [sys.executable],
            "<python-prefix>": [p for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p not in SYSTEM_PREFIXES],
            "<reprokit>": [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))],
            "<inductor-cache>": [
                settings.TORCHINDUCTOR_CACHE_DIR.get(),
                compiled and os.path.join(compiled, "inductor"),
                os.path.join(tmp, "torchinductor_" + _user()),
            ],
            "<triton-cache>": [
                settings.TRITON_CACHE_DIR.get(),
                compiled and os.path.join(compiled, "triton"),
                os.path.join(home, ".triton"),
            ],
            "<reprokit-cache>": [compiled],
            "<cache>": [cache],
            "<tmp>": [tmp, settings.TMPDIR.get(), "/tmp", "/var/tmp"],
            "<home>": [home],
        }
    )


def run_places(run_path: str, identity: dict | None = None) -> list:
    """(path, placeholder) pairs of a run folder, longest path first: the run's own folders (the run folder where
    it is and where it was made, the script's folder, the working folder) and its machine's recorded places."""
    identity = identity if identity is not None else recorded_identity(run_path)
    info = _read_json(os.path.join(run_path, "run.json"))
    options = info.get("options") or info
    script = options.get("script")
    made_in = identity.get("run_dir") or _read_json(os.path.join(run_path, VERDICT_FILE)).get("run_dir")
    own = [
        ("<run-dir>", [run_path, os.path.realpath(run_path), made_in]),
        ("<project>", [os.path.dirname(script) if script else None]),
        ("<cwd>", [options.get("cwd")]),
        ("<python-executable>", [info.get("python")]),
        ("<home>", [identity.get("home")]),
    ]
    machine = identity.get("places") or live_places()
    return ordered(own + list(machine.items()))


def recorded_identity(run_path: str) -> dict:
    """The identity (home, user, host, places, run_dir) recorded in a run folder; {} when none was."""
    return _read_json(os.path.join(run_path, RECORD_FILE)).get("identity") or {}


def ordered(named: Iterable) -> list:
    """(path, placeholder) pairs from (placeholder, [paths]) in priority order: the first placeholder of a path
    kept, longest path first so the most specific name wins. Paths are not resolved here: the pack reads them on
    another day, maybe on another machine, so live_places resolved them when they were recorded."""
    found: dict = {}
    for name, paths in named:
        for path in paths or ():
            if not path or not os.path.isabs(path):
                continue
            path = os.path.normpath(path)
            if path not in SYSTEM_PREFIXES:
                found.setdefault(path, name)
    return sorted(found.items(), key=lambda kv: (-len(kv[0]), kv[0]))


def _resolved(places: dict) -> dict:
    """Each place as given and with its links resolved (a venv's python, a symlinked home), without repeats."""
    out = {}
    for name, paths in places.items():
        both = [q for p in paths if p and os.path.isabs(p) for q in (os.path.normpath(p), os.path.realpath(p))]
        out[name] = sorted(set(both), key=both.index)
    return out


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return ""


def _read_json(path: str) -> dict:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
