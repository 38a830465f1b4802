"""The run folder's own files in a bisect pack, this machine's paths made portable: repro.py and test_repro.py (in
their comments only: the code must still run), test_repro.py's own run, the repro's real inputs only when asked
for, `reprokit capture`'s record (capture/) and draft_export's report (draft_export.txt). Every file is read first,
then every text made portable with the run's places."""

from __future__ import annotations

import dataclasses
import os
import pathlib

from reprokit.data.trial_files import read_tail
from reprokit.report.pack_facts import PackFacts
from reprokit.report.portable import portable_code, portable_with

CAPTURED = ("failure.json", "capture.json", os.path.join("case", "graph.py"), os.path.join("case", "meta.json"))


@dataclasses.dataclass(frozen=True)
class RunFiles:
    """What the run folder's files add to a pack: texts, binary blobs, and MANIFEST.json's input_data note (None
    without a repro)."""

    texts: dict
    blobs: dict
    input_data: dict | None

    @property
    def repro(self) -> str | None:
        """repro.py as packed (None when there is none, or it is empty)."""
        return self.texts.get("repro.py") or None


def run_files(facts: PackFacts, include_data: bool) -> RunFiles:
    """repro.py, test_repro.py (and its run's output), the repro's real inputs (repro_inputs.pt) only when it needs
    them and --include-data asked for them; capture/ (bisect --from-capture: the capture's record, the graph's code
    and the job's summary, packed even when the graph did not fail again) and draft_export.txt (#20)."""
    run, repro, iso = facts.run, facts.verdict.repro, facts.verdict.isolation
    code, whole, plain = {}, {}, {}  # member: path, made portable in comments only, throughout, or not at all
    if repro.test_repro and os.path.exists(run.file("test_repro.py")):
        code["test_repro.py"] = run.file("test_repro.py")
        if os.path.exists(run.file("test_repro_output.txt")):
            plain["logs/test_repro/output.txt"] = run.file("test_repro_output.txt")
    has_repro = bool(repro.path and os.path.exists(run.file("repro.py")))
    blobs, note = inputs(facts, include_data) if has_repro else ({}, None)
    if has_repro:
        code["repro.py"] = run.file("repro.py")
    if facts.info.get("capture"):
        whole.update({"capture/" + rel: run.file("capture", rel) for rel in CAPTURED})
    if facts.first_trial and (iso.export or {}).get("report"):
        whole["draft_export.txt"] = os.path.join(facts.first_trial, "draft_export.txt")
    texts = {member: read_tail(path) for member, path in plain.items()}
    code_texts = {member: read_tail(path) or "" for member, path in code.items()}
    whole_texts = {m: pathlib.Path(p).read_text(errors="replace") for m, p in whole.items() if os.path.exists(p)}
    texts.update({member: portable_code(text, facts.places) for member, text in code_texts.items()})
    texts.update({member: portable_with(text, facts.places) for member, text in whole_texts.items()})
    return RunFiles(texts, blobs, note)


def inputs(facts: PackFacts, include_data: bool) -> tuple[dict, dict]:
    """(blobs, MANIFEST.json's input_data note): repro_inputs.pt only where the repro reads it and --include-data
    asked for it; the note says which inputs the repro uses and whether real data is in the pack."""
    run, repro = facts.run, facts.verdict.repro
    has_file = repro.inputs == "file" or repro.inputs is None and os.path.exists(run.file("repro_inputs.pt"))
    blobs = {}
    if has_file and include_data and os.path.exists(run.file("repro_inputs.pt")):
        blobs["repro_inputs.pt"] = pathlib.Path(run.file("repro_inputs.pt")).read_bytes()
    note = {
        "repro_inputs": repro.inputs or ("file" if has_file else "synthetic"),
        "real_data_included": "repro_inputs.pt" in blobs or repro.inputs == "inline",
        "why": repro.inputs_note or None,
    }
    return blobs, note
