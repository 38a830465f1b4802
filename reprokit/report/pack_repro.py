"""The repro members of a bisect pack: repro.py and test_repro.py with this machine's paths out of their comments,
test_repro.py's own run, and the repro's real inputs only when asked for."""

from __future__ import annotations

import dataclasses
import os

from reprokit.data.trial_files import read_tail
from reprokit.report.pack_facts import PackFacts
from reprokit.report.portable import portable_code


@dataclasses.dataclass(frozen=True)
class ReproMembers:
    """What the repro adds to a pack: texts, binary blobs, and MANIFEST.json's input_data note (None: no repro)."""

    texts: dict
    blobs: dict
    input_data: dict | None

    @property
    def repro(self) -> str | None:
        """repro.py as packed (None when there is none, or it is empty)."""
        return self.texts.get("repro.py") or None


def repro_members(facts: PackFacts, include_data: bool) -> ReproMembers:
    """repro.py, test_repro.py (and its run's output), and the repro's real inputs (repro_inputs.pt) only when it
    needs them and --include-data asked for them; the note says which inputs the repro uses and whether real data
    is in the pack."""
    run, repro = facts.run, facts.verdict.repro
    texts: dict = {}
    blobs: dict = {}
    if repro.test_repro and os.path.exists(run.file("test_repro.py")):
        texts["test_repro.py"] = portable_code(read_tail(run.file("test_repro.py")) or "", facts.places)
        if os.path.exists(run.file("test_repro_output.txt")):
            texts["logs/test_repro/output.txt"] = read_tail(run.file("test_repro_output.txt"))
    if not (repro.path and os.path.exists(run.file("repro.py"))):
        return ReproMembers(texts, blobs, None)
    texts["repro.py"] = portable_code(read_tail(run.file("repro.py")) or "", facts.places)
    has_file = repro.inputs == "file" or repro.inputs is None and os.path.exists(run.file("repro_inputs.pt"))
    if has_file and include_data and os.path.exists(run.file("repro_inputs.pt")):
        with open(run.file("repro_inputs.pt"), "rb") as f:
            blobs["repro_inputs.pt"] = f.read()
    note = {
        "repro_inputs": repro.inputs or ("file" if has_file else "synthetic"),
        "real_data_included": "repro_inputs.pt" in blobs or repro.inputs == "inline",
        "why": repro.inputs_note or None,
    }
    return ReproMembers(texts, blobs, note)
