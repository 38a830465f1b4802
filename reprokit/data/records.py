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
