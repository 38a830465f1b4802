"""What a bisect pack holds of the failure as recorded outside its trials, its paths portable: `reprokit capture`'s
record (capture/) and draft_export's report of an export-stage failure (draft_export.txt)."""

from __future__ import annotations

import os

from reprokit.report.pack_facts import PackFacts
from reprokit.report.portable import portable_with

CAPTURED = ("failure.json", "capture.json", os.path.join("case", "graph.py"), os.path.join("case", "meta.json"))


def recorded_texts(facts: PackFacts) -> dict:
    """capture/ (bisect --from-capture: the capture's record, the graph's code and the job's summary, packed even
    when the graph did not fail again) and draft_export.txt (#20)."""
    paths = {}
    if facts.info.get("capture"):
        paths = {"capture/" + rel: facts.run.file("capture", rel) for rel in CAPTURED}
    draft = os.path.join(facts.first_trial, "draft_export.txt")
    if facts.first_trial and (facts.verdict.isolation.export or {}).get("report"):
        paths["draft_export.txt"] = draft
    texts = {}
    for member, path in paths.items():
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                texts[member] = portable_with(f.read(), facts.places)
    return texts
