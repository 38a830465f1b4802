"""What each phase of a bisect run hands on, as an immutable value: `Isolation` (the bisector, up to the verdict),
`Repro` (minify), `Evidence` (what is asked after the repro). The app builds the `Verdict` (data/verdict.py) from
them."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.data.jsondata import JsonData, _from_dict
from reprokit.data.records import ReproAttempt


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
    # What the verdict did not need and the report wants, asked after the repro: "confirm", "configs" (the flips'
    # first round) with "config_set" (their smallest set, where the first round leaves it), "torch_logs",
    # "graph_confirm"
    deferred: tuple = ()


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
    message: str | None = None  # the verdict's message once minify is done (notes added, or why no repro)
    # the folder of the last graph cut that shrank, as minify.json names it (the first diverging node is asked of
    # it, after the repro); verdict.json does not keep it
    case: str | None = None

    @classmethod
    def from_dict(cls, data):
        data = dict(data or {})
        data["attempts"] = tuple(ReproAttempt.coerce(a) for a in data.get("attempts") or ())
        return _from_dict(cls, data)

    def progress(self) -> dict:
        """The fields of its Event.MINIFIED: its size before and after, trials, seconds, and how it held up."""
        same = ("unit", "trials", "seconds", "verified", "reliability")
        return {"before": self.nodes_before, "after": self.nodes_after, **{k: getattr(self, k) for k in same}}


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
    seconds: float | None = None  # None: nothing was asked
