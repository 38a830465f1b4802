"""`Signature`, what makes two failures the same, and how a raw failure (exception text, traceback frames, signal)
becomes one."""

from __future__ import annotations

import ast
import re
import signal as _signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reprokit.data.jsondata import JsonData

# The cause of an exit or an exception that reported a mismatch of tensors (Signature.reports_mismatch).
MISMATCH = "mismatch: the script's or the repro's comparison found tensors that differ"


@dataclass(frozen=True)
class Signature(JsonData):
    """What makes two failures 'the same': kind, exception type, normalised message, innermost torch frame."""

    kind: str
    exc_type: str | None = None
    message: str = ""
    frame: str | None = None
    # "Type: message @ frame" of the root cause behind Dynamo's and inductor's wrappers (signature.root_cause):
    # when both sides have one, it alone decides, so one bug seen through different wrappers is one bug.
    cause: str | None = None
    # "Type: message" of the error a wrapper root_cause cannot follow names in its text alone (wrapped_error):
    # when both sides have one they must agree, or one wrapper's message would make two errors one failure.
    # None in a signature written before it (journals, verdicts), which then compares as it did.
    inner: str | None = None
    # The message's first line as torch wrote it, digits and operators kept (`x.size()[0] // 5 != 1`): what a
    # report quotes (said). Never compared: two runs of one bug differ in their numbers and paths.
    text: str = field(default="", compare=False)
    # `inner` as torch wrote it, for the same reason: the report quotes the error inside the wrapper (inside).
    inner_text: str = field(default="", compare=False)

    def matches(self, other: Signature | None) -> bool:
        if other is not None and self.reports_mismatch() and other.reports_mismatch():
            return True  # one wrong result, whether a check exited, raised, or the router's check saw it
        if other is not None and self.reports_mismatch() != other.reports_mismatch():
            return False  # exit 1 after a failed comparison is not exit 1 for another reason
        if other is None or self.kind != other.kind:
            return False
        if self.kind in ("hang", "accuracy", "slow"):
            return True
        if self.kind == "cuda_fault":  # the fault, and the kernel where both name one (data/signature.py)
            return self.message == other.message and _same_kernel(self.frame, other.frame)
        if self.inner and other.inner and self.inner != other.inner:
            return False
        if self.cause and other.cause:
            return self.cause == other.cause
        if self.exc_type != other.exc_type or self.message != other.message:
            return False
        return self.frame is None or other.frame is None or self.frame == other.frame

    def reports_mismatch(self) -> bool:
        """A wrong result, however its check reported it: reprokit's accuracy check, or an exit or an
        AssertionError right after a comparison that found the tensors differ (child/comparisons.py)."""
        return self.kind == "accuracy" or self.cause == MISMATCH

    def short(self) -> str:
        if self.kind == "pass":
            return "passes"
        head = self.exc_type or self.kind
        return f"{head}: {self.message}" if self.message else head

    def said(self) -> str:
        """The failure as torch said it, for a reader: short() with the message's original text where kept."""
        if self.kind == "pass" or not self.text:
            return self.short()
        return f"{self.exc_type or self.kind}: {self.text}"

    def inside(self) -> str:
        """The error a wrapper holds in its text alone, as torch said it ("" when none): `inner_text`, else `inner`
        (normalised) of a signature written before it."""
        return self.inner_text or self.inner or ""

    def told(self) -> str:
        """The failure in one line for a reader: the error inside its wrapper where there is one, else said()."""
        return self.inside() or self.said()

    def short_within(self) -> str:
        """short(), and the error inside its wrapper where there is one: the wrapper's own message is the same for
        every error it holds (Dynamo's "RuntimeError when making fake tensor call")."""
        inside = self.inside()
        return f"{self.short()} (inside it: {inside})" if inside else self.short()


# Words of fused kernel names that many unrelated kernels share (threshold_backward, convolution_backward).
_GENERIC_KERNEL_WORDS = {"", "backward", "forward", "native", "default", "copy", "to", "like"}


def _same_kernel(a: str | None, b: str | None) -> bool:
    """Two kernels of one CUDA fault: "kernel triton_poi_fused_mul_relu_sigmoid" is the same as "kernel
    triton_poi_fused_relu_threshold_backward": they share an op. A lowering that falls back, or a graph cut
    smaller, fuses other ops around the op that raises; an unnamed kernel (launches were asynchronous) matches
    any."""
    if a is None or b is None or a == b:
        return True
    ops_a, ops_b = (set(k.partition("fused_")[2].split("_")) - _GENERIC_KERNEL_WORDS for k in (a, b))
    return bool(ops_a & ops_b)


_PATTERNS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    # A path starts a word (not `a/b`, `(n + 1)/2`, a URL's `//host/...`), each part without a slash, so an
    # operator stays: the export guard `x.size()[0] // 5 != 1` (pytorch/pytorch#181097) kept its `//`.
    (re.compile(r"(?<![\w/.:)\]])(?:[A-Za-z]:)?/[A-Za-z_.~][^\s'\"():,/]*(?:/[^\s'\"():,/]+)*"), "<path>"),
    (re.compile(r"\b(?:tmp|temp)[A-Za-z0-9_]+"), "<tmp>"),
    # A hash has letters and digits; a run of digits alone is a number (e.g. a float's fraction).
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b"), "<hash>"),
    # Names inductor and AOT autograd number as they generate them: a cut of the graph renumbers them, and the
    # bug stays (pytorch/pytorch#196570: "KeyError: 'buf4'" from the whole graph, 'buf2' from a cut of it).
    (
        re.compile(r"\b(buf|arg|primals_|tangents_|in_ptr|out_ptr|in_out_ptr|ks|op|s|u)\d+(_\d+)?\b"),
        lambda m: f"{m.group(1)}N{'_N' if m.group(2) else ''}",
    ),
    (re.compile(r"\b((?:cpp_fused|triton_(?:poi|per|red|tem|for))_\w*?)_\d+\b"), r"\1_N"),
    # Numbers, but not digits inside identifiers (log1p, conv2d, float16 stay as they are).
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])"), "N"),
    (re.compile(r"\s+"), " "),
]


def first_line(message: str) -> str:
    """The first meaningful line of an error message, as torch wrote it."""
    for candidate in (message or "").splitlines():
        candidate = candidate.strip()
        if candidate and not candidate.startswith(("Set TORCHDYNAMO_VERBOSE", "from user code")):
            return candidate
    return ""


def normalise_message(message: str, limit: int = 200) -> str:
    """First meaningful line of an error message with numbers, addresses, paths and temp names removed."""
    line = first_line(message)
    for pattern, repl in _PATTERNS:
        line = pattern.sub(repl, line)
    return line.strip()[:limit]


def innermost_torch_frame(frames: Sequence[tuple[str, str]], torch_root: str) -> str | None:
    """'torch/<rel path>:<function>' of the deepest frame inside the torch package, if any.

    `frames` are (filename, function) pairs, outermost first. Line numbers are left out on purpose:
    they move with unrelated edits, the function does not.
    """
    root = torch_root.rstrip("/") + "/"
    for filename, func in reversed(list(frames)):
        if filename.startswith(root):
            return f"torch/{filename[len(root) :]}:{func}"
    return None


# How much of the message's first line a signature keeps as torch wrote it, to quote (Signature.said).
QUOTED = 400


def for_exception(exc_type: str, message: str, frames: Sequence[tuple[str, str]], torch_root: str) -> Signature:
    frame = innermost_torch_frame(frames, torch_root)
    return Signature("exception", exc_type, normalise_message(message), frame, text=first_line(message)[:QUOTED])


def for_signal(signum: int) -> Signature:
    try:
        name = _signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return Signature("crash", name, f"killed by {name}", None)


# How torch.testing.assert_close says that tensors differ (child/classify.py).
MISMATCH_WORDS = ("Tensor-likes are not close!", "Scalars are not close!")


def for_exit(code: int) -> Signature:
    return Signature("exit", None, f"exit code {code}", None)


# Messages of CUDA faults that poison the context; the trial that meets one must end.
CUDA_FAULTS = (
    "device-side assert triggered",
    "an illegal memory access was encountered",
    "unspecified launch failure",
    "misaligned address",
)

# What every trial after a CUDA fault runs with (bisect/cuda.py): the fault surfaces at the kernel that raised it.
LAUNCH_BLOCKING_ENV = {"CUDA_LAUNCH_BLOCKING": "1"}

# Inductor's generated kernel names: triton_{poi,per,red,tem}_fused_<ops>_<n>, cpp_fused_<ops>_<n>.
KERNEL_NAME = re.compile(r"\b(triton_(?:poi|per|red|tem|for)_\w+|cpp_fused_\w+)")


def for_cuda_fault(exc_type: str, text: str, blocking: bool = True) -> Signature:
    """An asynchronous CUDA fault surfaces at whatever call synchronises next: the host frame is no part of its
    identity. It is the fault, and the kernel that raised it where the text names one, its index in the graph
    left out; only when launches were synchronous (`blocking`: CUDA_LAUNCH_BLOCKING=1), since otherwise the
    kernel a traceback names is merely the launch at which the host noticed. Kernels compare by their fused ops
    (records.Signature.matches)."""
    fault = next((m for m in CUDA_FAULTS if m in text), "CUDA fault")
    kernels = KERNEL_NAME.findall(text) if blocking else []
    kernel = f"kernel {re.sub(r'_[0-9]+$', '', kernels[-1])}" if kernels else None
    return Signature("cuda_fault", exc_type, fault, kernel)


PASS = Signature("pass")
HANG = Signature("hang", None, "timed out", None)


# Exceptions Dynamo, AOT autograd and inductor raise around the error that really happened. Two runs of one bug
# can differ in the wrapper (the script's backend vs a graph trial's, a lowering vs a codegen step) but not in
# the cause, so signatures are taken from the innermost cause.
WRAPPERS = (
    "BackendCompilerFailed",
    "InductorError",
    "InternalTorchDynamoError",
    "LoweringException",
    "SubgraphLoweringException",
    "TorchRuntimeError",
)
_TYPE_PREFIX = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failed|Interrupt|Exit)): ?(.*)$", re.S)


def root_cause(exc: BaseException) -> tuple[str, str, BaseException]:
    """(type name, message, exception whose traceback to read) of the innermost cause behind compiler wrappers.

    A wrapper that keeps its cause (`inner_exception`, `__cause__`) is followed; one that keeps only the text
    (LoweringException is raised `from None` with "Type: message" as its text) is read from its message.
    """
    seen = set()
    name, message = type(exc).__name__, str(exc)
    while name in WRAPPERS and id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if isinstance(inner, BaseException):
            exc = inner
            name, message = type(exc).__name__, str(exc)
            continue
        # "backend='x' raised:\nType: msg" or "Type: msg\ntarget: ..." or "Failed running ...: got Type('msg')"
        lines = [ln for ln in message.splitlines() if ln.strip()]
        for candidate in lines[:3]:
            m = _TYPE_PREFIX.match(candidate.strip())
            if m and m.group(1).split(".")[-1] != name:
                name, message = m.group(1).split(".")[-1], "\n".join([m.group(2)] + lines[lines.index(candidate) + 1 :])
                break
        else:
            break
    if name == REMOTE:
        name, message = _remote_error(exc) or (name, message)
    return name, message, exc


# Dynamo's TorchRuntimeError is raised `from None`, and names the error its fake-tensor run met only in its
# explanation: "...: call_function <built-in method tanh ...>(*(FakeTensor(...),), **{}): got RuntimeError('.numpy()
# is not supported for tensor subclasses.')". Its own message is the same for every such error ("RuntimeError when
# making fake tensor call"): pysource-minimize's `0()` kernel raised TypeError there and passed for the bug.
_GOT = re.compile(r"\bgot ([A-Za-z_][\w.]*(?:Error|Exception|Failed|Interrupt|Exit))\((.*)\)$")


def wrapped_error(name: str, message: str) -> str | None:
    """The error that a wrapper root_cause stopped at (name, message) names in its text as "got Type('message')",
    as "Type: message" normalised; None for any other exception, or a wrapper whose text names none."""
    got = _got(name, message)
    return f"{got[0]}: {normalise_message(got[1])}" if got else None


def wrapped_said(name: str, message: str) -> str:
    """wrapped_error's error as torch said it, "Type: message" with its first line whole, to quote; "" for none."""
    got = _got(name, message)
    return f"{got[0]}: {first_line(got[1])[:QUOTED]}" if got else ""


def _got(name: str, message: str) -> tuple[str, str] | None:
    """(type name, message) of the "got Type('message')" in a wrapper's text; None for any other exception."""
    if name not in WRAPPERS:
        return None
    for line in message.splitlines():
        m = _GOT.search(line.strip())
        if m:
            return m.group(1).split(".")[-1], _repr_args(m.group(2))
    return None


def _repr_args(args: str) -> str:
    """The message an exception's repr holds ("'msg'" is msg), or the text as it is where it is no literal."""
    try:
        value = ast.literal_eval(args)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return args
    return value if isinstance(value, str) else str(value)


# Inductor compiles kernels in a pool of worker processes once the pool is up, and re-raises a worker's exception
# as SubprocException with only its traceback's text. One bug then has two faces: on a GPU machine's cold start the
# original run met "SubprocException: An exception occurred in a subprocess", every later trial (forked, pool not
# up) the worker's own "RuntimeError: Failed to import ...", and the lowering search compared the two. The worker's
# error, read from that text, is the cause either way.
REMOTE = "SubprocException"
_TEXT_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in (\S+)')


def _remote_error(exc: BaseException) -> tuple[str, str] | None:
    """(type name, message) of the last exception in a worker's traceback text, or None when none is found."""
    lines = (getattr(exc, "details", None) or str(exc)).splitlines()
    last_frame = max((i for i, ln in enumerate(lines) if _TEXT_FRAME.match(ln)), default=-1)
    for i in range(last_frame + 1, len(lines)):
        m = _TYPE_PREFIX.match(lines[i])
        if m and not lines[i][:1].isspace():
            return m.group(1).split(".")[-1], "\n".join([m.group(2)] + lines[i + 1 :])
    return None


def remote_frames(exc: BaseException) -> list[tuple[str, str]]:
    """The frames of a compile worker's traceback text where `exc` (root_cause's third value) is its wrapper; []."""
    return text_frames(exc) if type(exc).__name__ == REMOTE else []


def text_frames(exc: BaseException) -> list[tuple[str, str]]:
    """(filename, function) of the frames a worker's traceback text names, outermost first (SubprocException)."""
    return [(m[1], m[2]) for m in map(_TEXT_FRAME.match, (getattr(exc, "details", None) or str(exc)).splitlines()) if m]
