"""The answer of a bisect run, frozen: the phases' results (`Isolation`, `Repro`, `Evidence`) and what the app adds
after them (`RunInfo`). verdict.json keeps its flat keys (the `--json` machine format, read back by --resume and
`reprokit minify/pack/versions RUN_DIR`); `Verdict.to_dict` and `Verdict.from_dict` are the one mapping between
the two. Only app/verdict_file builds or replaces one (tests/test_architecture.py checks it)."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from reprokit.data.jsondata import JsonData, _from_dict
from reprokit.data.phases import Evidence, Isolation, Repro
from reprokit.data.records import ReproAttempt


@dataclass(frozen=True)
class RunInfo(JsonData):
    """What the app adds after the phases: the run's folder, its exit code, the pack, the releases checked."""

    run_dir: str = ""
    exit_code: int = 0
    tarball: str | None = None
    # reprokit versions: {"user", "rows": [{"release", "status", "detail", "seconds", "mode", "env"}], "fixed_in",
    # "regression_since", "summary", ...}; status is same | passes | different | cannot_run
    versions: dict | None = None
    # --budget: {"seconds", "spent", "not_asked": [what was never asked], "trials_not_run"} (app/pipeline.py)
    budget: dict | None = None
    # Default flags, the run past its time target (minify/plan.py) when the evidence began: {"seconds", "not_asked":
    # [the evidence's costly searches left for a run given --budget]} (app/pipeline.py)
    time_plan: dict | None = None
    # Compiled differs from eager but is the closer to float64 (exit 4): {"graph", "note", "case"}
    more_accurate: dict | None = None


@dataclass(frozen=True)
class Verdict:
    """A bisect run's answer. Where a later phase supersedes an earlier value (config, subsystem, decisive_trials,
    message, deferred) the Verdict's property of that name is the final value; read it, not the parts."""

    isolation: Isolation
    repro: Repro = field(default_factory=Repro)  # empty (kind and path None): no repro made (yet)
    evidence: Evidence = field(default_factory=Evidence)  # seconds None: nothing asked after the repro (yet)
    run: RunInfo = field(default_factory=RunInfo)

    @property
    def config(self) -> dict | None:
        """The config flips that avoid the failure: the evidence's once "configs" was asked after the repro."""
        return self.evidence.config if "configs" in self.evidence.asked else self.isolation.config

    @property
    def subsystem(self) -> dict | None:
        """The subsystem application named, with "confirmed" once its boundary was run again after the repro."""
        found = self.isolation.subsystem
        if "confirm" in self.evidence.asked and found:
            return {**found, "confirmed": self.evidence.confirmed}
        return found

    @property
    def decisive_trials(self) -> dict | None:
        """The trial folders that decided the verdict, with the torch logs' one once it ran."""
        if self.evidence.torch_logs is None:
            return self.isolation.decisive_trials
        return {**(self.isolation.decisive_trials or {}), "torch_logs": self.evidence.torch_logs}

    @property
    def message(self) -> str:
        """What the verdict says: minify's message (the bisect's with its notes) once it ran, else the bisect's."""
        return self.isolation.message if self.repro.message is None else self.repro.message

    @property
    def deferred(self) -> tuple:
        """The questions still waiting for after the repro: those the evidence did not ask (a spent time plan leaves
        the config flips' smallest set, "config_set")."""
        return tuple(d for d in self.isolation.deferred if d not in self.evidence.asked)

    def final_values(self) -> dict:
        """Each value a later phase supersedes, by the name the Isolation gives it, as this verdict says it."""
        return {name: getattr(self, name) for name in FINAL}

    def to_dict(self) -> dict:
        """verdict.json's flat form, its keys in the order reprokit always wrote them."""
        flat = {
            **_sequences_as_lists(dataclasses.asdict(self.isolation)),
            **_repro_keys(self.repro),
            **_evidence_keys(self.evidence),
            **dataclasses.asdict(self.run),
            **self.final_values(),
            "deferred": list(self.deferred),
        }
        return copy.deepcopy({k: flat[k] for k in FLAT_KEYS})

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        """A verdict from verdict.json's flat form; keys an older reprokit did not write take their defaults. What
        a later phase superseded is read back as the isolation's own value (verdict.json keeps only the final)."""
        data = {"decisive_trials": {}, **data}  # verdict.json's default, where the Isolation's is None
        isolation = _from_dict(Isolation, data)
        isolation = dataclasses.replace(isolation, **{k: tuple(data.get(k) or ()) for k in _SEQUENCES})
        return cls(
            isolation=isolation, repro=_repro_of(data), evidence=_evidence_of(data), run=_from_dict(RunInfo, data)
        )


# What a later phase supersedes: the Verdict's properties, the Isolation's fields of these names.
FINAL = ("config", "subsystem", "decisive_trials", "message", "deferred")
_SEQUENCES = ("argv", "other_failures", "ladder", "deferred")  # tuples in the Isolation, lists in verdict.json

# verdict.json's keys, in the order an older reprokit wrote them (its flat dataclass's fields).
FLAT_KEYS = (
    *("script", "argv", "failing_stage", "last_passing_stage", "kind", "signature", "graph", "graph_count"),
    *("graph_code", "capture", "hang_limit", "graph_case", "graph_confirmed", "config", "subsystem", "flaky"),
    *("repro_rate", "repro_runs", "flaky_tries", "unsteady", "warm_cache", "plain_run", "trials", "seconds"),
    *("run_dir", "other_failures", "ladder", "user_backend", "compile_args", "message", "exit_code"),
    *("decisive_trials", "repro", "repro_verified", "repro_fresh_runs", "repro_reliability", "repro_signature"),
    *("repro_kind", "repro_attempts", "repro_inputs", "repro_inputs_note", "repro_input_bytes", "repro_scrubbed"),
    *("nodes", "minify_trials", "minify_seconds", "tarball", "cuda_fault", "speed", "modes", "meta_kernel"),
    *("memory", "inductor_pieces", "test_repro", "test_repro_verified", "test_repro_failure", "test_repro_seconds"),
    *("versions", "export", "aoti_kernel", "deferred", "deferred_seconds", "budget", "deferred_trials"),
    *("numerics", "divergence", "more_accurate", "time_plan"),
)

# The Repro's fields under their verdict.json names (nodes_before, nodes_after and unit are "nodes").
_REPRO_KEYS = {
    "kind": "repro_kind",
    "path": "repro",
    "verified": "repro_verified",
    "signature": "repro_signature",
    "inputs": "repro_inputs",
    "inputs_note": "repro_inputs_note",
    "input_bytes": "repro_input_bytes",
    "scrubbed": "repro_scrubbed",
    "fresh_runs": "repro_fresh_runs",
    "reliability": "repro_reliability",
    "trials": "minify_trials",
    "seconds": "minify_seconds",
    "test_repro": "test_repro",
    "test_repro_verified": "test_repro_verified",
    "test_repro_failure": "test_repro_failure",
    "test_repro_seconds": "test_repro_seconds",
}

# The Evidence's fields verdict.json keeps as they are; config, confirmed and torch_logs are folded into the
# isolation's config, subsystem and decisive_trials (the Verdict's properties).
_EVIDENCE_KEYS = {
    "numerics": "numerics",
    "divergence": "divergence",
    "graph_confirmed": "graph_confirmed",
    "trials": "deferred_trials",
    "seconds": "deferred_seconds",
}


def _sequences_as_lists(fields: dict) -> dict:
    return {**fields, **{k: list(fields[k]) for k in _SEQUENCES}}


def _repro_keys(repro: Repro) -> dict:
    nodes = None
    if repro.nodes_before is not None or repro.nodes_after is not None:
        nodes = {
            "original": repro.nodes_before,
            "minified": repro.nodes_after,
            **({"unit": repro.unit} if repro.unit else {}),
        }
    attempts = [dataclasses.asdict(ReproAttempt.coerce(a)) for a in repro.attempts]
    return {
        **{flat: getattr(repro, name) for name, flat in _REPRO_KEYS.items()},
        "nodes": nodes,
        "repro_attempts": attempts,
    }


def _repro_of(data: dict) -> Repro:
    nodes = data.get("nodes") or {}
    return Repro(
        **{name: data[flat] for name, flat in _REPRO_KEYS.items() if flat in data},
        attempts=tuple(ReproAttempt.coerce(a) for a in data.get("repro_attempts") or ()),
        nodes_before=nodes.get("original"),
        nodes_after=nodes.get("minified"),
        unit=nodes.get("unit"),
    )


def _evidence_keys(evidence: Evidence) -> dict:
    return {flat: getattr(evidence, name) for name, flat in _EVIDENCE_KEYS.items()}


def _evidence_of(data: dict) -> Evidence:
    return Evidence(**{name: data[flat] for name, flat in _EVIDENCE_KEYS.items() if flat in data})
