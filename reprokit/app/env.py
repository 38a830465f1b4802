"""`reprokit env`: the environment report alone, scrubbed of secrets."""

from __future__ import annotations

import json

from reprokit.report import env as envmod
from reprokit.report.redact import Redactor


def environment_report() -> dict:
    """{"data": the report as JSON text, "text": the same as a summary}, both scrubbed of secrets."""
    data = envmod.collect()
    redactor = Redactor.from_environment()
    return {
        "data": redactor.scrub(json.dumps(data, indent=2, sort_keys=True), "env"),
        "text": redactor.scrub(envmod.summary_text(data), "env"),
    }
