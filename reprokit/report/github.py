"""What GitHub takes of an issue body: its size limit, long parts folded into pointers to the attached tarball."""

from __future__ import annotations

GITHUB_LIMIT = 65_536  # characters of an issue body


def fit_github(text: str, folded: list) -> str:
    """The issue body within GitHub's limit: each of `folded` (long parts, least needed first) replaced by a
    pointer to the attached tarball until it fits."""
    for part, pointer in folded:
        if len(text) <= GITHUB_LIMIT:
            break
        if part and part in text:
            text = text.replace(part, pointer)
    if len(text) > GITHUB_LIMIT:
        text = (
            text[: GITHUB_LIMIT - 200] + "\n\n[... cut to GitHub's limit; the whole text is in the attached tarball]\n"
        )
    return text
