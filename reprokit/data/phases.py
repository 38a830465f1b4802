"""What each phase of a bisect run hands on, as an immutable value: `Isolation` (the bisector, up to the verdict),
`Repro` (minify), `Evidence` (what is asked after the repro). The app builds the `Verdict` from them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from reprokit.data.jsondata import JsonData, _from_dict
from reprokit.data.records import ReproAttempt, Verdict


@dataclass(frozen=True)
class Isolation(JsonData):
    """Which stage, graph, config flips and subsystem application break the script: the bisector's answer."""

    script: str
    argv: tuple = ()
    failing_stage: str | None = None
    last_passing_stage: str | None = None
    kind: str | None = None
    signature: dict | None = None
    graph: int | None = None
    graph_count: int = 0
    graph_code: str | None = None
    capture: dict | None = None  # bisect --from-capture: the capture read ({"from", "rank"})
    hang_limit: dict | None = None  # a hang: {"seconds", "why"}, how long a compile may take (bisect/hang_limit)
    graph_case: str | None = None  # the original run's failing graph, failing alone: later trials ran it
    config: dict | None = None
    subsystem: dict | None = None
    flaky: bool = False
    repro_rate: float | None = None
    repro_runs: int | None = None
    flaky_tries: int | None = None  # flaky: each question asked up to this many times (trial/repeat.py)
    unsteady: str = ""  # the baseline or a stage that failed another way, asked again: flaky or broken that way
    warm_cache: dict | None = None  # it fails only with inductor's caches on: which, and how (bisect/warm.py)
    plain_run: dict | None = None  # only the script run as written fails: how it was bisected (bisect/plain.py)
    trials: int = 0
    seconds: float = 0.0
    other_failures: tuple = ()
    ladder: tuple = ()
    user_backend: str | None = None
    compile_args: dict | None = None
    message: str = ""
    decisive_trials: dict | None = None
    cuda_fault: dict | None = None
    speed: dict | None = None
    modes: list | None = None
    meta_kernel: dict | None = None
    memory: dict | None = None
    inductor_pieces: dict | None = None
    export: dict | None = None
    aoti_kernel: dict | None = None
    # What the verdict did not need and the report wants, asked after the repro: "confirm", "configs", "torch_logs",
    # "graph_confirm"
    deferred: tuple = ()

    @classmethod
    def from_dict(cls, data):
        """The isolation part of a verdict.json (a finished run's, or an older reprokit's: missing keys take the
        verdict's defaults). The app's one way from a verdict back to an isolation; the domain never needs one."""
        v = Verdict.from_dict(data)
        fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(cls)}
        return cls(**{**fields, **{k: tuple(fields[k] or ()) for k in _SEQUENCES}})

    def verdict_fields(self) -> dict:
        """The verdict's fields this isolation sets (lists where verdict.json has lists): the app builds the
        Verdict from them (app/verdict_file)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**fields, **{k: list(fields[k]) for k in _SEQUENCES}}


_SEQUENCES = ("argv", "other_failures", "ladder", "deferred")  # tuples in the Isolation, lists in the Verdict


@dataclass(frozen=True)
class Repro(JsonData):
    """What minify made: which kind of repro.py, where, how much smaller, whether verified, and each kind tried."""

    kind: str | None = None  # graph | graph_in_context | graph_in_script | source | export_graph; None: none
    path: str | None = None
    verified: bool | None = None
    signature: dict | None = None  # how the repro failed in its fresh interpreter
    attempts: tuple = ()  # ReproAttempt, in the order tried
    nodes_before: int | None = None
    nodes_after: int | None = None
    unit: str | None = None  # "lines" for a source reduction; None: graph nodes
    inputs: str | None = None  # synthetic | inline | file
    inputs_note: str = ""
    input_bytes: int = 0
    scrubbed: bool = False
    fresh_runs: int | None = None
    reliability: dict | None = None  # {"failed", "runs", "floor", "most"}: minify/reliability.py
    trials: int = 0
    seconds: float = 0.0
    test_repro: str | None = None
    test_repro_verified: bool | None = None
    test_repro_failure: str = ""
    test_repro_seconds: float | None = None
    message: str = ""  # the verdict's message once minify is done (notes added, or why no repro)

    @classmethod
    def of(cls, v: Verdict) -> Repro:
        """The repro part of a verdict minify filled in."""
        nodes = v.nodes or {}
        return cls(
            kind=v.repro_kind,
            path=v.repro,
            verified=v.repro_verified,
            signature=v.repro_signature,
            attempts=tuple(ReproAttempt.coerce(a) for a in v.repro_attempts or ()),
            nodes_before=nodes.get("original"),
            nodes_after=nodes.get("minified"),
            unit=nodes.get("unit"),
            inputs=v.repro_inputs,
            inputs_note=v.repro_inputs_note,
            input_bytes=v.repro_input_bytes,
            scrubbed=v.repro_scrubbed,
            fresh_runs=v.repro_fresh_runs,
            reliability=v.repro_reliability,
            trials=v.minify_trials,
            seconds=v.minify_seconds,
            test_repro=v.test_repro,
            test_repro_verified=v.test_repro_verified,
            test_repro_failure=v.test_repro_failure,
            test_repro_seconds=v.test_repro_seconds,
            message=v.message,
        )

    @classmethod
    def from_dict(cls, data):
        data = dict(data or {})
        data["attempts"] = tuple(ReproAttempt.coerce(a) for a in data.get("attempts") or ())
        return _from_dict(cls, data)

    def verdict_fields(self) -> dict:
        """The verdict's fields this repro sets (names as verdict.json has them)."""
        nodes = None
        if self.nodes_before is not None or self.nodes_after is not None:
            nodes = {
                "original": self.nodes_before,
                "minified": self.nodes_after,
                **({"unit": self.unit} if self.unit else {}),
            }
        return {
            "repro_kind": self.kind,
            "repro": self.path,
            "repro_verified": self.verified,
            "repro_signature": self.signature,
            "repro_attempts": list(self.attempts),
            "nodes": nodes,
            "repro_inputs": self.inputs,
            "repro_inputs_note": self.inputs_note,
            "repro_input_bytes": self.input_bytes,
            "repro_scrubbed": self.scrubbed,
            "repro_fresh_runs": self.fresh_runs,
            "repro_reliability": self.reliability,
            "minify_trials": self.trials,
            "minify_seconds": self.seconds,
            "test_repro": self.test_repro,
            "test_repro_verified": self.test_repro_verified,
            "test_repro_failure": self.test_repro_failure,
            "test_repro_seconds": self.test_repro_seconds,
            "message": self.message,
        }


@dataclass(frozen=True)
class Evidence(JsonData):
    """What was asked after the repro (Bisector.after_repro): none of it changes the isolation's answer."""

    asked: tuple = ()  # the deferred questions this answers
    config: dict | None = None  # the config flips that avoid the failure: a workaround ("configs")
    confirmed: bool | None = None  # did the subsystem boundary hold on a re-run ("confirm")
    torch_logs: str | None = None  # the trial folder of the failing stage with torch's logs on ("torch_logs")
    numerics: dict | None = None  # wrong numbers: what inductor's numerics modes say (bisect/numerics, "numerics")
    divergence: dict | None = None  # wrong numbers: the failing graph's first diverging node ("divergence")
    # the script with only the adopted graph compiled failed its check the same way ("graph_confirm")
    graph_confirmed: bool | None = None
    trials: int = 0
    seconds: float = 0.0

    def verdict_fields(self, v: Verdict) -> dict:
        """The verdict's fields this evidence sets, given the verdict so far."""
        out = {"deferred": [], "deferred_seconds": self.seconds, "deferred_trials": self.trials}
        if "configs" in self.asked:
            out["config"] = self.config
        if "confirm" in self.asked and v.subsystem:
            out["subsystem"] = {**v.subsystem, "confirmed": self.confirmed}
        if "numerics" in self.asked:
            out["numerics"] = self.numerics
        if "divergence" in self.asked:
            out["divergence"] = self.divergence
        if "graph_confirm" in self.asked:
            out["graph_confirmed"] = self.graph_confirmed
        if self.torch_logs is not None:
            out["decisive_trials"] = {**(v.decisive_trials or {}), "torch_logs": self.torch_logs}
        return out
