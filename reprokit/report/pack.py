"""The one pack builder: a plan of scrubbed members under one top folder, written as a deterministic tarball.

bisect_report, doctor_report and model_report each fill a PackPlan for their kind of run folder; the parts they
share are modules of their own (pack_env: env/, pack_source: source/, pack_logs: logs/).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable

from reprokit.data.events import Event
from reprokit.data.rundir import write_atomic
from reprokit.report.redact import Redactor


@dataclasses.dataclass
class PackPlan:
    """What one tarball holds: texts (scrubbed when built), binary blobs, the top folder and the redactor."""

    top: str
    redactor: Redactor
    texts: dict = dataclasses.field(default_factory=dict)
    blobs: dict = dataclasses.field(default_factory=dict)
    notes: dict = dataclasses.field(default_factory=dict)  # what MANIFEST.json says of the pack's content

    @property
    def redactions(self) -> list:
        return self.redactor.redactions

    def members(self) -> dict:
        """{relative path: bytes}: every text scrubbed, the blobs as they are, and MANIFEST.json."""
        members = {path: self.redactor.scrub(text, path).encode() for path, text in self.texts.items()}
        members.update(self.blobs)
        members["MANIFEST.json"] = manifest(members, self.redactor.redactions, self.notes)
        return members

    def write(self, folder: str, emit: Callable[..., None] = lambda *a, **k: None) -> str:
        """Write <top>.tar.gz into folder; returns its path."""
        path = os.path.join(folder, self.top + ".tar.gz")
        write_atomic(path, deterministic_tar(self.members(), self.top))
        emit(Event.PACKED, path=path)
        return path


def short_digest(obj) -> str:
    """Eight hex digits naming a pack by what it says (the same run packs under the same name)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:8]


def trim_traceback(text: str, keep: int = 60) -> str:
    """The decisive part of a traceback: the last `keep` lines, which hold the error and its innermost frames."""
    lines = [l for l in text.rstrip().splitlines() if l.strip() not in ("^", "") and set(l.strip()) - set("^~ ")]
    return "\n".join(lines[-keep:])


def manifest(members: dict, redactions: list, notes: dict | None = None) -> bytes:
    """MANIFEST.json: every member's size and sha256, what was redacted where, and what the pack says of its
    content (the git diff's scope, whether real input data is included)."""
    files = [{"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, b in sorted(members.items())]
    body = {"files": files, "redacted": sorted(redactions, key=lambda r: (r["place"], r["kind"]))}
    return (json.dumps({**body, **(notes or {})}, indent=2, sort_keys=True) + "\n").encode()


def deterministic_tar(members: dict, top: str) -> bytes:
    """Sorted regular files under one folder, mtime 0, uid/gid 0, no owner names, 0644, gzip without a timestamp."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(members):
            data = members[path]
            norm = os.path.normpath(path)
            if norm.startswith(("/", "..")) or os.path.isabs(norm):
                raise ValueError(f"refusing to pack {path!r}: outside the pack folder")
            info = tarfile.TarInfo(f"{top}/{norm}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.type = tarfile.REGTYPE
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()
