"""The git state of the user's script, read with GitPython: commit, branch, dirty, diff, remotes."""
from __future__ import annotations

import os
import re


def strip_credentials(url: str) -> str:
    """https://user:token@host/x -> https://host/x (the redactor notes it too)."""
    return re.sub(r"(?<=://)[^/@\s]+@", "", url)


def git_state(script: str, imported: list) -> dict | None:
    """None when the script is not in a git work tree (or GitPython/git is unavailable)."""
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
    try:
        commit = repo.head.commit.hexsha
        diff = repo.git.diff("HEAD")
    except ValueError:  # no commit yet
        commit, diff = None, repo.git.diff()
    branch = None if repo.head.is_detached else repo.active_branch.name
    untracked = set(repo.untracked_files)
    imported_untracked = sorted(os.path.relpath(p, root) for p in imported
                                if os.path.relpath(p, root) in untracked)
    return {
        "root_name": os.path.basename(root),
        "commit": commit,
        "branch": branch,
        "dirty": repo.is_dirty(untracked_files=False),
        "script": os.path.relpath(os.path.abspath(script), root),
        "untracked_imported": imported_untracked,
        "remotes": {r.name: [strip_credentials(u) for u in r.urls] for r in repo.remotes},
        "diff": diff,
    }
