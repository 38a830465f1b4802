"""Scrub secrets, identity and this machine's paths from text before it enters a tarball; remember what was scrubbed
(kind and place), never the value."""

from __future__ import annotations

import getpass
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from reprokit.report.keyed import KeyedSecrets
from reprokit.report.places import live_places, ordered, recorded_identity, run_places
from reprokit.report.portable import placeholders_in, portable_with
from reprokit.report.portable import places as live_pairs
from reprokit.report.redact_rules import NEEDLES, PATTERNS, SECRET_NAME  # noqa: F401 (SECRET_NAME: re-exported)


@dataclass
class Redactor:
    """Consistent scrubbing across every file of one tarball."""

    known_secrets: list = field(default_factory=list)  # literal values (from secret-named env vars, argv)
    home: str = field(default_factory=lambda: os.path.expanduser("~"))
    user: str = field(default_factory=lambda: _safe(getpass.getuser))
    host: str = field(default_factory=lambda: _safe(socket.gethostname))
    redactions: list = field(default_factory=list)
    keyed: KeyedSecrets | None = None  # the run's recorded values, found by their keyed hashes
    places: list = field(default_factory=list)  # (path, placeholder) of the machine's places, longest first

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None, argv=(), places: list | None = None) -> Redactor:
        """Every secret-named variable's value is a known secret, wherever it shows up later; places: the machine's
        (path, placeholder) pairs (None: this shell's)."""
        env = os.environ if env is None else env
        secrets = [v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= 6]
        places = live_pairs() if places is None else places
        r = cls(known_secrets=sorted(set(secrets), key=len, reverse=True), places=places)
        r.add_argv(argv)
        return r

    @classmethod
    def for_run(cls, run_path: str, argv=()) -> Redactor:
        """The redactor of a run folder, read from it (of_run says what it holds)."""
        keyed = KeyedSecrets.load(run_path)
        identity = keyed.identity if keyed is not None else recorded_identity(run_path)
        return cls.of_run(keyed, run_places(run_path, identity), argv)

    @classmethod
    def of_run(cls, keyed: KeyedSecrets | None, places: list, argv=()) -> Redactor:
        """The redactor of a run: the values bisect recorded (by keyed hash), its identity and its machine's places
        (run_places), so the pack is the same from any shell; a folder recorded before keyed hashes (keyed None)
        falls back to the live environment's secrets."""
        if keyed is None:
            return cls.from_environment(None, argv, places)
        ident = {k: v for k, v in keyed.identity.items() if k in ("home", "user", "host")}
        r = cls(keyed=keyed, places=places, **ident)
        r.add_argv(argv)
        return r

    def add_argv(self, argv) -> None:
        """Secrets that the patterns find in the command line are known values wherever they show up later."""
        for text in argv:
            for _kind, pattern in PATTERNS:
                for m in pattern.finditer(text):
                    value = m.group("secret") if "secret" in pattern.groupindex else m.group(0)
                    if len(value) >= 4:
                        self.known_secrets.append(value)

    def scrub(self, text: str, place: str) -> str:
        """The text with secrets replaced by <redacted:kind>, identity and the machine's paths by placeholders;
        noted by place."""
        if self.keyed is not None:
            text = self._cut(text, self.keyed.spans(text), place)
        for value in self.known_secrets:
            if value and value in text:
                text = text.replace(value, "<redacted:secret value>")
                self._note("secret value", place)
        lowered = text.lower()
        for kind, pattern in PATTERNS:
            if kind in NEEDLES and not any(n in lowered for n in NEEDLES[kind]):
                continue
            # (mypy infers no lambda whose default binds a loop variable)
            text = pattern.sub(lambda m, k=kind: self._replace(m, k, place), text)  # type: ignore[misc]
        text = self._paths(text, place)
        for value, label in ((self.user, "<user>"), (self.host, "<host>")):
            if value and len(value) >= 3 and value not in ("root",) and re.search(rf"\b{re.escape(value)}\b", text):
                text = re.sub(rf"\b{re.escape(value)}\b", label, text)
                self._note(label.strip("<>") + " name", place)
        return text

    def _paths(self, text: str, place: str) -> str:
        """Paths of the machine replaced by placeholders (HTML-escaped in HTML); each kind of place noted."""
        pairs = self.places
        if self.home and len(self.home) > 1 and not any(n == "<home>" for _, n in pairs):
            pairs = ordered([(n, [p]) for p, n in pairs] + [("<home>", [self.home])])
            self.places = pairs
        text = portable_with(text, pairs, in_html=place.endswith((".html", ".htm")))
        for kind in placeholders_in(text):
            self._note(f"{kind} path", place)
        return text

    def _cut(self, text: str, spans: list, place: str) -> str:
        out, pos = [], 0
        for start, end in sorted(spans):
            if start >= pos:
                out.append(text[pos:start] + "<redacted:secret value>")
                pos = end
                self._note("secret value", place)
        return "".join(out) + text[pos:]

    def _replace(self, m: re.Match, kind: str, place: str) -> str:
        has_group = "secret" in m.re.groupindex and m.group("secret") is not None
        if (m.group("secret") if has_group else m.group(0)).startswith("<redacted:"):
            return m.group(0)  # already scrubbed by an earlier rule: leave its marker readable
        self._note(kind, place)
        if has_group:
            start, end = m.span("secret")
            s0 = m.start()
            whole = m.group(0)
            return whole[: start - s0] + f"<redacted:{kind}>" + whole[end - s0 :]
        return f"<redacted:{kind}>"

    def _note(self, kind: str, place: str) -> None:
        entry = {"kind": kind, "place": place}
        if entry not in self.redactions:
            self.redactions.append(entry)

    def env_value(self, name: str, value: str, place: str) -> str:
        """An allowlisted variable's value as it may be shown: secret-named ones report presence only."""
        if SECRET_NAME.search(name):
            self._note("secret-named variable", f"{place}:{name}")
            return "<set, value withheld>"
        return self.scrub(value, f"{place}:{name}")


def live_identity() -> dict:
    """This shell's home, user, host and places: what the redactor replaces by <home>, <user>, <host> and the
    places' placeholders (recorded when a run starts, so a later pack needs no live shell)."""
    return {
        "home": os.path.expanduser("~"),
        "user": _safe(getpass.getuser),
        "host": _safe(socket.gethostname),
        "places": live_places(),
    }


def _safe(fn) -> str:
    try:
        return fn() or ""
    except Exception:
        return ""
