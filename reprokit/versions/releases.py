"""torch release numbers: parsing, the index's list of releases, the default set, and what a table of results
says (fixed in, regression since). Pure: no processes, no torch."""

from __future__ import annotations

import re
import subprocess
import sys

from reprokit.errors import ReprokitError

_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")

# How each release ran, as the table says it.
STATUS_TEXT = {
    "same": "fails the same way",
    "passes": "passes",
    "different": "fails differently",
    "cannot_run": "cannot run",
}


def key(release: str) -> tuple:
    """Sort key of "2.13.0" (a local suffix such as +cpu is dropped)."""
    m = _RELEASE.match(release.split("+")[0])
    if not m:
        raise ReprokitError(f"not a torch release number: {release!r} (write it as 2.14.1)")
    return tuple(int(g) for g in m.groups())


def base(release: str) -> str:
    """The release without its local suffix: 2.13.0+cpu is 2.13.0."""
    return release.split("+")[0]


def index_releases(index_url: str | None = None, timeout: float = 60.0) -> list:
    """Final torch releases the package index offers, oldest first (pip's own index query: it honours the
    user's pip configuration). A ReprokitError that says "no network" when the index cannot be reached."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", "torch", "--timeout", "15", "--retries", "1"]
    if index_url:
        cmd += ["--index-url", index_url]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReprokitError("no network: the package index did not answer in time (torch's releases unknown)") from None
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("Available versions:")), None)
    if line is None:
        where = index_url or "the package index"
        raise ReprokitError(f"no network: could not list torch's releases on {where}")
    found = {base(v.strip()) for v in line.split(":", 1)[1].split(",")}
    return sorted((v for v in found if _RELEASE.match(v)), key=key)


def newest_per_minor(releases: list) -> list:
    """The last patch release of each minor version, oldest first."""
    last: dict = {}
    for r in releases:
        last[key(r)[:2]] = r
    return [last[k] for k in sorted(last)]


def default_set(user: str, releases: list) -> list:
    """The user's release, the newest, and the newest of the minor version before it."""
    minors = newest_per_minor(releases)
    picked = {base(user)} | set(minors[-2:])
    return sorted(picked, key=key)


def choose(user: str, releases: list, torch_list: str | None, newest: bool, between: tuple | None) -> list:
    """The releases to try, oldest first; an unknown release is a ReprokitError naming it."""
    if torch_list:
        asked = [r.strip() for r in torch_list.split(",") if r.strip()]
        for r in asked:
            key(r)
            if base(r) not in releases and base(r) != base(user):
                near = ", ".join(releases[-4:])
                raise ReprokitError(f"unknown torch release {r}: the index offers {near} and older")
        picked = {base(r) for r in asked} | {base(user)}
    elif newest:
        picked = {base(user), releases[-1]}
    elif between:
        lo, hi = sorted((base(between[0]), base(between[1])), key=key)
        for r in (lo, hi):
            if r not in releases and r != base(user):
                raise ReprokitError(f"unknown torch release {r}: the index offers {', '.join(releases[-4:])} and older")
        picked = {r for r in newest_per_minor(releases) if key(lo) <= key(r) <= key(hi)} | {lo, hi, base(user)}
    else:
        picked = set(default_set(user, releases))
    return sorted(picked, key=key)


def boundaries(rows: list) -> list:
    """Adjacent tested releases (oldest first) where one passes and the other fails the same way."""
    judged = [r for r in rows if r["status"] in ("same", "passes")]
    return [(a["release"], b["release"]) for a, b in zip(judged, judged[1:]) if a["status"] != b["status"]]


def conclusions(rows: list, user: str) -> dict:
    """fixed_in (the first passing release after the user's failing one), regression_since (the first failing
    release after a passing older one), and the summary line, newest news first."""
    rows = sorted(rows, key=lambda r: key(r["release"]))
    by = {r["release"]: r["status"] for r in rows}
    user = base(user)
    out: dict = {"fixed_in": None, "regression_since": None, "summary": ""}
    newer = [r for r in rows if key(r["release"]) > key(user) and r["status"] in ("same", "passes")]
    older = [r for r in rows if key(r["release"]) < key(user) and r["status"] in ("same", "passes")]
    if by.get(user) != "same":
        out["summary"] = f"torch {user} does not fail the same way here ({STATUS_TEXT.get(by.get(user) or '', '?')})"
        return out
    if newer and newer[-1]["status"] == "passes":
        last_fail = max((r for r in rows if r["status"] == "same"), key=lambda r: key(r["release"]))
        fixed = next(
            r["release"] for r in newer if key(r["release"]) > key(last_fail["release"]) and r["status"] == "passes"
        )
        out["fixed_in"] = fixed
        failing = [r["release"] for r in rows if r["status"] == "same"]
        fails = failing[0] if len(failing) == 1 else ", ".join(failing[:-1]) + " and " + failing[-1]
        out["summary"] = f"fixed in torch {fixed}: upgrade (fails on {fails}, passes on {fixed}: fixed)"
    elif newer:
        out["summary"] = f"still fails the same way on torch {newer[-1]['release']}, the newest tried"
    if older and any(r["status"] == "passes" for r in older):
        last_pass = max((r for r in older if r["status"] == "passes"), key=lambda r: key(r["release"]))
        first_fail = min(
            (r for r in rows if key(r["release"]) > key(last_pass["release"]) and r["status"] == "same"),
            key=lambda r: key(r["release"]),
        )
        out["regression_since"] = first_fail["release"]
        out["regression_after"] = last_pass["release"]
        note = f"regression since torch {first_fail['release']} (passes on {last_pass['release']})"
        out["summary"] = "; ".join(s for s in (out["summary"], note) if s)
    if not out["summary"]:
        out["summary"] = f"fails the same way on torch {user}; no other release was judged"
    return out


def first_change(lo: str, hi: str, offered: list, status_of) -> tuple:
    """Binary search of the releases strictly between lo and hi (whose statuses differ) for the adjacent pair
    where the status changes: (last release like lo, first release like hi). status_of(release) runs one; a
    release that is neither (fails differently, cannot run) stops the search where it stands."""
    inner = [r for r in offered if key(lo) < key(r) < key(hi)]
    left, right = lo, hi
    want_left, want_right = status_of(lo), status_of(hi)
    while inner:
        mid = inner[len(inner) // 2]
        status = status_of(mid)
        if status == want_left:
            left, inner = mid, [r for r in inner if key(r) > key(mid)]
        elif status == want_right:
            right, inner = mid, [r for r in inner if key(r) < key(mid)]
        else:
            break
    return left, right
