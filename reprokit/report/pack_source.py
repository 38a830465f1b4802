"""source/ of a pack: the script, the local modules it imported, and its git state (credentials stripped)."""

from __future__ import annotations

import json
import os

from reprokit.data.trial_files import read_tail


def source_texts(script: str, imported: list, git: dict | None) -> tuple[dict, dict]:
    """(source/ texts, what MANIFEST.json says of them): the script, the modules it imported, and git (report/git.py's
    state): the diff of the files it imported or read, the names alone of other changed paths."""
    texts = {}
    script_dir = os.path.dirname(script)
    for path in [script] + list(imported):
        text = read_tail(path)
        if text is not None:
            texts["source/" + os.path.relpath(path, script_dir)] = text
    notes = {}
    if git and "diff_of" in git:
        notes["git_diff"] = {"content_of": git["diff_of"], "names_only": git["other_changed"]}
    if git:
        state = {k: val for k, val in git.items() if k != "diff"}
        texts["source/git.json"] = json.dumps(state, indent=2, sort_keys=True)
        if git.get("diff"):
            texts["source/git.diff"] = git["diff"]
    return texts, notes
