"""Plain data passed between layers; every type round-trips through JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

from reprokit.data.jsondata import JsonData, _from_dict
from reprokit.data.kinds import NOT_FAILURES, OutcomeKind

# Signature and MISMATCH live in data/signature.py; trial/ and bisect/session.py still import them from here.
from reprokit.data.signature import MISMATCH as MISMATCH
from reprokit.data.signature import Signature as Signature

# Outcome kinds (data/kinds.py): "pass" is the only non-failure; "invalid" marks a trial that could not be set up
# (e.g. a graph edit that does not type-check) and never counts as the bug.
KINDS = tuple(OutcomeKind)


_SAVE_GRAPH_KEY = "capture"  # TrialSpec.save_graph's name in JSON


@dataclass(frozen=True)
class TrialSpec(JsonData):
    """Everything one trial runs; its hash is the journal key."""

    mode: str  # "script" | "graph" | "repro" (repro.py's parts from a graph) | "model" (pack --model)
    stage: str  # "none" | "eager" | "aot_eager" | "aot_eager_decomp_partition" | "inductor" | "user"
    script: str = ""
    argv: tuple = ()
    cwd: str = ""
    # The script's content hash: the same path with other content is another question (journal key).
    script_hash: str = ""
    # Folders put on sys.path after the script's own: a reduced copy of the script, written in the run folder,
    # still imports the modules that sit beside the original.
    path_dirs: tuple = ()
    # Compiler config for the stage: inductor names as they are, functorch ones as "functorch.<name>"
    config: dict = field(default_factory=dict)
    # {"backend", "name", "max"} for torch's bisect counters; {"backend", "names"}: those subsystems all off
    subsystem: dict | None = None
    only_graph: int | None = None  # compile only this graph with `stage`, the rest with `other_stage`
    other_stage: str = "eager"
    check_accuracy: bool = False
    # Save graph N (its code and inputs) into the trial folder, as repro.py's parts; "capture" in JSON, the key
    # journals were written with (TrialSpec.key is of the JSON, so --resume still finds their trials)
    save_graph: int | None = None
    case: str | None = None  # graph mode: folder of a captured graph
    edit: dict | None = None  # graph mode: which nodes are computed, cut into inputs, output
    run_backward: bool = False
    env: dict = field(default_factory=dict)  # extra environment variables (e.g. TORCH_LOGS for the logs trial)
    attempt: int = 0  # a deliberate re-run of the same question (repeat, boundary confirmation)
    observe: bool = False  # time each call of what torch.compile returned, record graph breaks (doctor, slow)
    compile_overrides: dict = field(default_factory=dict)  # "mode"/"dynamic" replacing the script's own
    max_input_bytes: int = 64 << 20  # capture: real input values are kept up to this size
    capture_backward: bool = False  # capture: the backward graph AOT autograd hands inductor, not the forward
    # Save the first graph whose compile or call raises into the trial folder's failing_case/ (the original run:
    # the later questions can then be asked of that graph alone, without running the script again)
    capture_failing: bool = False
    fresh_interpreter: bool = False  # never a fork of the warm worker (repro verification claims a fresh process)
    model: dict | None = None  # mode "model": what pack --model builds and compiles
    ranks: int = 1  # processes under torchrun (pack --model --launch, bisect --nproc-per-node)
    # A hang's per-compile limit (seconds): a compile past it ends the trial as a hang (child/compile_limit.py);
    # set once a trial hung, so later trials do not each wait out the whole timeout. Not in the key when unset.
    compile_limit: float | None = None
    label: str = ""  # for humans only; not part of the key

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d[_SAVE_GRAPH_KEY] = d.pop("save_graph")
        return d

    def key(self) -> str:
        d = self.to_dict()
        d.pop("label")
        if d.get("compile_limit") is None:
            d.pop("compile_limit", None)  # the journals written before it existed keep their keys
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        if _SAVE_GRAPH_KEY in data:
            data["save_graph"] = data.pop(_SAVE_GRAPH_KEY)
        spec = _from_dict(cls, data)
        return dataclasses.replace(spec, argv=tuple(spec.argv))


def text_hash(text: str) -> str:
    """sha256 of a text (first 16 hex digits): the journal key of a script that exists only as a candidate."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_hash(path: str) -> str:
    """sha256 of a file's bytes (first 16 hex digits); empty when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return ""


@dataclass(frozen=True)
class Outcome(JsonData):
    """What one trial did."""

    kind: str
    signature: Signature
    seconds: float
    returncode: int | None = None
    trial_dir: str = ""
    traceback: str = ""
    graphs: int = 0  # graphs Dynamo handed to the router
    compiled: bool = False  # did the script call torch.compile at all
    user_backend: str | None = None
    compile_args: dict | None = None
    counters: dict = field(default_factory=dict)  # subsystem -> applications seen
    bisect_detail: str | None = None  # what the last enabled subsystem application was
    failed_graph: int | None = None  # graph whose compile or run raised, when known
    note: str = ""
    device: str | None = None  # the CUDA_VISIBLE_DEVICES the trial was pinned to, on a multi-GPU machine
    device_check: str | None = None  # after a CUDA fault: what the health probe of that device said
    failed_ranks: list | None = None  # several ranks: those that failed (the lowest one's is the trial's)
    longest_compile: float | None = None  # seconds of the longest backend compile that finished in the trial

    @property
    def failed(self) -> bool:
        return self.kind not in NOT_FAILURES

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return d

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        data["signature"] = Signature.from_dict(data.get("signature") or {"kind": data["kind"]})
        return _from_dict(cls, data)


@dataclass(frozen=True)
class StageResult(JsonData):
    stage: str
    kind: str
    summary: str
    seconds: float
    same: bool  # fails with the original signature


@dataclass(frozen=True)
class ReproAttempt(JsonData):
    """One kind of repro minify tried (graph, graph_in_context, graph_in_script, source, export_graph) and what
    came of it ("verified", or why not)."""

    kind: str
    result: str

    def __getitem__(self, name: str):
        # The renderers read attempts as they read verdict.json (a["kind"]): the same either way.
        return getattr(self, name)

    @classmethod
    def coerce(cls, item) -> ReproAttempt:
        """An attempt from itself or from its JSON form."""
        return item if isinstance(item, cls) else cls(kind=item.get("kind", ""), result=item.get("result", ""))


@dataclass
class Verdict(JsonData):
    """The answer of a bisect run, written to verdict.json."""

    script: str
    argv: list
    failing_stage: str | None = None
    last_passing_stage: str | None = None
    kind: str | None = None
    signature: dict | None = None
    graph: int | None = None
    graph_count: int = 0
    graph_code: str | None = None
    # bisect --from-capture: the capture it read ({"from", "rank"}); every trial ran the captured graph
    capture: dict | None = None
    hang_limit: dict | None = None  # a hang: {"seconds", "why"}, how long a compile may take (bisect/hang_limit)
    # The failing graph as the original run saved it, when it fails alone the same way: the bisect's later
    # questions and minify ran graph trials on it instead of runs of the script
    graph_case: str | None = None
    # A graph that diverged from eager as of its recent call (a mismatch the script's own check found): whether
    # the script with that graph alone compiled failed the same way, asked once after the repro (None: not asked)
    graph_confirmed: bool | None = None
    config: dict | None = None
    subsystem: dict | None = None
    flaky: bool = False
    repro_rate: float | None = None
    repro_runs: int | None = None  # --repeat: how many runs of the original repro_rate is of
    flaky_tries: int | None = None  # flaky: each question asked up to this many times (trial/repeat.py)
    # Runs that failed another way than the original and were asked again (the baseline, a stage): one line each,
    # flaky or broken that way (bisect/steady.py); never the failure itself
    unsteady: str = ""
    # The script fails only with inductor's caches on (bisect/warm.py): {"caches", "when", "env", "cold", "warm"}
    warm_cache: dict | None = None
    # The instrumented runs pass and the script run as written fails (bisect/plain.py): the command, the plain
    # ladder's answer, how it was asked and what it could not ask
    plain_run: dict | None = None
    trials: int = 0
    seconds: float = 0.0
    run_dir: str = ""
    other_failures: list = field(default_factory=list)
    ladder: list = field(default_factory=list)
    user_backend: str | None = None
    compile_args: dict | None = None
    message: str = ""
    exit_code: int = 0
    decisive_trials: dict = field(default_factory=dict)
    # filled by minify
    repro: str | None = None
    repro_verified: bool | None = None
    repro_fresh_runs: int | None = None  # how many fresh interpreters ran repro.py to verify it
    # {"failed": n, "runs": m, "floor": k, "most": r}: repro.py failed the same way in n of m fresh interpreters, run up
    # to r times and stopped at k failures (minify/reliability)
    repro_reliability: dict | None = None
    repro_signature: dict | None = None
    # Which repro repro.py is: "graph" (the captured graph alone), "graph_in_context" (replayed with the script's
    # call-time context, custom ops or hooks), "graph_in_script" (minified inside the running script, the script's
    # own check the oracle), "source" (the script reduced); each kind tried, with what came of it
    repro_kind: str | None = None
    repro_attempts: list = field(default_factory=list)  # of ReproAttempt
    # repro.py's inputs: "synthetic" (matched on recorded statistics), "inline" (the few real values written into
    # it) or "file" (real values in repro_inputs.pt, packed only with --include-data); why real data was needed
    repro_inputs: str | None = None
    repro_inputs_note: str = ""
    repro_input_bytes: int = 0
    repro_scrubbed: bool = False  # the redactor changed repro.py, which was then verified again
    nodes: dict | None = None
    minify_trials: int = 0
    minify_seconds: float = 0.0
    tarball: str | None = None
    cuda_fault: dict | None = None  # {"fault", "kernel", "trial"} from a CUDA_LAUNCH_BLOCKING=1 re-run
    # --kind slow: the original's speed, and each torch.compile mode / dynamic setting tried
    speed: dict | None = None
    modes: list | None = None
    # a fake (meta) kernel that disagrees with its real kernel, from the crossref stage: {"op", "mismatch", ...}
    meta_kernel: dict | None = None
    # out of memory compiled only: {"compiled_peak_mib", "eager_peak_mib", "measure"}
    memory: dict | None = None
    # a user backend that had inductor compile pieces of its graph: {"count", "failed": {"piece", "ops", ...}}
    inductor_pieces: dict | None = None
    # test_repro.py (issue #17): the repro as a PyTorch-style failing test, and how its fresh-interpreter run failed
    test_repro: str | None = None
    test_repro_verified: bool | None = None
    test_repro_failure: str = ""
    # How long test_repro.py's run took: the time to a verified repro.py is minify_seconds less this.
    test_repro_seconds: float | None = None
    # reprokit versions: {"user", "rows": [{"release", "status", "detail", "seconds", "mode", "env"}], "fixed_in",
    # "regression_since", "summary", ...}; status is same | passes | different | cannot_run
    versions: dict | None = None
    # an export-stage failure (torch.export raised): {"kind", "guard", "line", "code", "fix"}
    export: dict | None = None
    # an AOTI run failure that named no kernel, named by AOTI's kernel-name printer: {"kernel", "launched", ...}
    aoti_kernel: dict | None = None
    # Asked after the repro, not before the verdict (Bisector.after_repro): "confirm" (the subsystem boundary's
    # re-run), "configs" once a subsystem application names the cause, "torch_logs"; emptied when they ran.
    deferred: list = field(default_factory=list)
    deferred_seconds: float | None = None
    # --budget: {"seconds", "spent", "not_asked": [what was never asked], "trials_not_run"} (app/bisect.py)
    budget: dict | None = None
    deferred_trials: int = 0
    # Wrong numbers (bisect/numerics): what inductor's numerics modes say ({"passed", "cause", "workaround",
    # "text"}), and the failing graph's first diverging node ({"node", "target", "level", "lowering", ...})
    numerics: dict | None = None
    divergence: dict | None = None
    # Compiled differs from eager but is the closer to float64 (exit 4): {"graph", "note"}
    more_accurate: dict | None = None

    @classmethod
    def from_dict(cls, data):
        """A verdict from verdict.json; keys an older reprokit did not write take their defaults."""
        v = _from_dict(cls, data)
        v.repro_attempts = [ReproAttempt.coerce(a) for a in v.repro_attempts or ()]
        return v
