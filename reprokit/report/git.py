"""The git state of the user's script, read with GitPython: commit, branch, dirty, remotes, and the diff of the
files the script used (the names alone of every other changed path)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence


def strip_credentials(url: str) -> str:
    """https://user:token@host/x -> https://host/x (the redactor notes it too)."""
    return re.sub(r"(?<=://)[^/@\s]+@", "", url)


def git_state(script: str, imported: list, read: Sequence = ()) -> dict | None:
    """None when the script is not in a git work tree (or GitPython/git is unavailable).

    "diff" covers the script, the modules it imported and the files it read; "other_changed" names the rest of
    the work tree's changes, whose content stays out of the pack."""
    try:
        import git
    except ImportError:
        return {"error": "GitPython not installed"}
    try:
        repo = git.Repo(os.path.dirname(os.path.abspath(script)), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    except git.GitError as e:
        return {"error": str(e)}
    root = repo.working_tree_dir
    if root is None:  # a bare repository: no work tree holds the script
        return None
    used = sorted({os.path.relpath(os.path.abspath(p), root) for p in [script, *imported, *read]})
    used = [p for p in used if not p.startswith("..")]
    try:
        commit = repo.head.commit.hexsha
        base = ["HEAD"]
    except ValueError:  # no commit yet
        commit, base = None, []
    diff = repo.git.diff(*base, "--", *used) if used else ""
    changed = repo.git.diff(*base, "--name-only").splitlines()
    branch = None if repo.head.is_detached else repo.active_branch.name
    untracked = set(repo.untracked_files)
    return {
        "root_name": os.path.basename(root),
        "commit": commit,
        "branch": branch,
        "dirty": repo.is_dirty(untracked_files=False),
        "script": os.path.relpath(os.path.abspath(script), root),
        "untracked_imported": sorted(p for p in used if p in untracked),
        "remotes": {r.name: [strip_credentials(u) for u in r.urls] for r in repo.remotes},
        "diff_of": [p for p in used if p in changed],
        "other_changed": sorted(p for p in changed if p not in used),
        "diff": diff,
    }
