"""Scrub secrets and identity from text before it enters a tarball; remember what was scrubbed, never the value."""
from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass, field

SECRET_NAME = re.compile(r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)

# (kind, pattern); the whole match is replaced unless the pattern has a group named "secret".
PATTERNS = [
    ("private key block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----")),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("hugging face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("api key (sk-)", re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("aws secret key", re.compile(r"(?i)aws.{0,20}?(?:secret|key).{0,5}?[=:]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})")),
    ("gcp api key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("wandb key", re.compile(r"(?i)wandb.{0,30}?\b(?P<secret>[0-9a-f]{40})\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url credentials", re.compile(r"(?<=://)(?P<secret>[^/@\s:]+(?::[^/@\s]*)?)@")),
    ("secret argument", re.compile(
        r"(?i)(?:--?(?:password|passwd|token|api[-_]?key|secret|access[-_]?key|auth)(?:[-_][a-z]+)?)(?:=|\s+)"
        r"[\"']?(?P<secret>[^\s\"']+)")),
    # NAME=value with an environment-variable style name (upper case, as in logs and shells)...
    ("secret assignment", re.compile(
        r"\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY)[A-Z0-9_]*\s*[=:]\s*[\"']?(?P<secret>[^\s\"',]{4,})")),
    # ...and name = "literal" in code, any case; only quoted literals, so `tokens = torch.randint(...)` is code.
    ("secret literal", re.compile(
        r"(?i)\b\w*(?:token|secret|password|passwd|api_?key)\w*\s*[=:]\s*[\"'](?P<secret>[^\"'\s]{4,})[\"']")),
]


@dataclass
class Redactor:
    """Consistent scrubbing across every file of one tarball."""

    known_secrets: list = field(default_factory=list)  # literal values (from secret-named env vars, argv)
    home: str = field(default_factory=lambda: os.path.expanduser("~"))
    user: str = field(default_factory=lambda: _safe(getpass.getuser))
    host: str = field(default_factory=lambda: _safe(socket.gethostname))
    redactions: list = field(default_factory=list)

    @classmethod
    def from_environment(cls, env: dict | None = None, argv=()) -> "Redactor":
        """Every secret-named variable's value is a known secret, wherever it shows up later."""
        env = os.environ if env is None else env
        secrets = [v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= 6]
        r = cls(known_secrets=sorted(set(secrets), key=len, reverse=True))
        for text in argv:
            for kind, pattern in PATTERNS:
                for m in pattern.finditer(text):
                    value = m.group("secret") if "secret" in pattern.groupindex else m.group(0)
                    if len(value) >= 4:
                        r.known_secrets.append(value)
        return r

    def scrub(self, text: str, place: str) -> str:
        """The text with secrets replaced by <redacted:kind>, identity by placeholders; noted by place."""
        for value in self.known_secrets:
            if value and value in text:
                text = text.replace(value, "<redacted:secret value>")
                self._note("secret value", place)
        for kind, pattern in PATTERNS:
            text = pattern.sub(lambda m, k=kind: self._replace(m, k, place), text)
        if self.home and len(self.home) > 1 and self.home in text:
            text = text.replace(self.home, "~")
            self._note("home path", place)
        for value, label in ((self.user, "<user>"), (self.host, "<host>")):
            if value and len(value) >= 3 and value not in ("root",) and re.search(rf"\b{re.escape(value)}\b", text):
                text = re.sub(rf"\b{re.escape(value)}\b", label, text)
                self._note(label.strip("<>") + " name", place)
        return text

    def _replace(self, m: re.Match, kind: str, place: str) -> str:
        self._note(kind, place)
        if "secret" in m.re.groupindex and m.group("secret") is not None:
            start, end = m.span("secret")
            s0 = m.start()
            whole = m.group(0)
            return whole[: start - s0] + f"<redacted:{kind}>" + whole[end - s0:]
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


def _safe(fn) -> str:
    try:
        return fn() or ""
    except Exception:
        return ""
