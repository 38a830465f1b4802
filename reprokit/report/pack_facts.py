"""What the pack of a bisect run needs of its folder, read once into one frozen value before any part is rendered.

The verdict, run.json, the first failing trial's record, the environment report and variables, the script's git
state, the decisive error, the run's places and the redactor made from them: each read here once, in this order, and every
part of the pack (report/pack_*.py) renders from the value alone, so no part goes back to the folder for a fact
another part has read already.
"""

from __future__ import annotations

import dataclasses
import os

from reprokit.data.rundir import RunDir
from reprokit.data.trial_files import trial_record
from reprokit.data.verdict import Verdict
from reprokit.errors import ReprokitError
from reprokit.report.env import allowed_env, environment_report
from reprokit.report.error_section import error_section
from reprokit.report.git import git_state
from reprokit.report.keyed import KeyedSecrets
from reprokit.report.places import ordered, recorded_identity, run_places
from reprokit.report.redact import Redactor


@dataclasses.dataclass(frozen=True)
class PackFacts:
    """A bisect run's facts for its pack. The redactor is the one mutable part: it notes what it scrubs, for
    MANIFEST.json."""

    run: RunDir
    verdict: Verdict
    info: dict  # run.json
    first: dict  # the first failing trial's record
    env: dict  # the environment report (env.json)
    variables: dict  # the allowlisted environment variables run.json recorded (report/env.py)
    git: dict | None  # the script's git state (report/git.py), None outside a work tree
    error: dict  # the decisive error (report/error_section.py)
    places: list  # (path, placeholder) pairs, longest first: the script's folder, then the run's places
    redactor: Redactor

    @property
    def project(self) -> str:
        """The script's folder."""
        return os.path.dirname(self.verdict.isolation.script)

    @property
    def first_trial(self) -> str:
        """The first failing trial's folder ("" when none was recorded)."""
        return (self.verdict.decisive_trials or {}).get("first_failing") or ""


def load_verdict(run: RunDir) -> Verdict:
    """The run's verdict, or a ReprokitError when the bisect has not finished."""
    recorded = run.verdict()
    if recorded is None:
        raise ReprokitError(f"{run.path} has no verdict.json yet; run reprokit bisect to completion first")
    return Verdict.from_dict(recorded)


def gather(run: RunDir, verdict: Verdict | None = None) -> PackFacts:
    """Every fact the pack needs, read once; verdict: the one the run in progress holds (else read from the folder)."""
    v = verdict or load_verdict(run)
    iso = v.isolation
    info = run.read_json("run.json")
    first = trial_record((v.decisive_trials or {}).get("first_failing") or "")
    variables = allowed_env(info.get("environment"))
    env = environment_report(run)
    git = git_state(iso.script, first.get("local_modules") or [], first.get("local_files_read") or [])
    error = error_section(run, v)
    # Secret values: found by the keyed hashes bisect recorded (never the values), so any shell packs the same.
    keyed = KeyedSecrets.load(run.path)
    machine = run_places(run.path, keyed.identity if keyed is not None else recorded_identity(run.path))
    # The portable forms name the verdict's script folder first (<project> where it is also the working folder);
    # the redactor keeps the run's own order, as it always has.
    places = ordered([("<project>", [os.path.dirname(iso.script)])] + [(n, [p]) for p, n in machine])
    redactor = Redactor.of_run(keyed, machine, argv=list(iso.argv) + [info.get("command", "")])
    return PackFacts(run, v, info, first, env, variables, git, error, places, redactor)
