"""The decisive error of a failure, in at most 40 lines: what a maintainer reads second, after the repro.

Pure text processing over what a trial recorded (stderr, result.json's traceback and note, faulthandler's dump):
- an exception: the chain Python printed, each with the user's frames and the torch frame that raised;
- a C++ or Triton compile error: the compiler's `error:` lines with their context and the failing generated line,
  never its warnings;
- a crash: the signal and the faulting thread's stack only;
- an accuracy failure: the mismatch (max abs/rel difference, where, eager vs compiled vs float64).
"""

from __future__ import annotations

import re

LIMIT = 40
TRACEBACK = "Traceback (most recent call last):"
CHAIN_LINES = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
# torch.distributed's excepthook, once a process group is initialised (repro.py on the fake one), prefixes every
# line of the traceback it prints with the rank
RANK_PREFIX = re.compile(r"^\[rank\d+\]: ?")
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')
EXC_HEAD = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Unsupported|Warning)\w*"
    r"|AssertionError|KeyboardInterrupt)(?::\s?(?P<msg>.*))?$"
)
COMPILER_ERROR = re.compile(r"(^|\s|:)(fatal )?error:\s", re.IGNORECASE)
FAULT = re.compile(r"^Fatal Python error: (?P<what>.+)$")
# Advice torch appends to every error: not part of the error.
NOISE = ("Set TORCHDYNAMO_VERBOSE=1", "This message can be suppressed by setting PYTORCH_PRINT_REPRO_ON_FAILURE")
FH_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>.+)$')
THREAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+")
# Frames of the machinery around the user's code: Python's own, runpy, reprokit's trial process.
GENERATED = re.compile(r"/c[a-z0-9]{40,}\.py$")
NOT_USER = (
    "<frozen ",
    "/runpy.py",
    "/reprokit/",
    "/concurrent/futures/",
    "/threading.py",
    "/unittest/",
    "/torch/testing/",
)


def package_of(path: str) -> str:
    """The top package of a frame's file: the folder after site-packages, else the path's torch or triton part
    (a source checkout); "" for anything else."""
    m = re.search(r"(?:site|dist)-packages/([^/]+)/", path)
    if m:
        return m.group(1)
    return next((p for p in ("torch", "functorch", "triton") if f"/{p}/" in path), "")


def is_torch_frame(path: str) -> bool:
    """A frame inside torch (or triton) as installed."""
    return package_of(path) in ("torch", "functorch", "triton")


def is_user_frame(path: str) -> bool:
    """A frame of the user's code: not torch, not an installed package, not the interpreter's machinery, not
    the module inductor generated (its failing line is in the compiler's output)."""
    return not (
        is_torch_frame(path)
        or "site-packages" in path
        or "dist-packages" in path
        or any(m in path for m in NOT_USER)
        or re.search(r"/lib/python3\.\d+/", path)
        or GENERATED.search(path)
    )


def last_chain(text: str) -> list:
    """The last chain of tracebacks in text: [(frames, exception lines)] oldest first, as Python prints it.
    frames: [(file, line, name, code)]; exception lines: the type and message, the message whole."""
    lines = [RANK_PREFIX.sub("", line) for line in text.splitlines()]
    starts = [i for i, l in enumerate(lines) if l.strip() == TRACEBACK]
    if not starts:
        return []
    # Walk back from the last traceback over the chain markers that join it to the ones before.
    first = len(starts) - 1
    while first > 0 and any(m in "\n".join(lines[starts[first - 1] : starts[first]]) for m in CHAIN_LINES):
        first -= 1
    chain = []
    for k in range(first, len(starts)):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        chain.append(parse_block(lines[starts[k] + 1 : end]))
    return chain


def parse_block(lines: list) -> tuple:
    """(frames, exception lines) of one traceback block (its lines after the Traceback header)."""
    frames, i = [], 0
    while i < len(lines):
        m = FRAME.match(lines[i])
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not FRAME.match(lines[i + 1]) else ""
            frames.append((m["file"], int(m["line"]), m["name"], code if code and not is_marker(code) else ""))
            i += 1
            continue
        if lines[i].startswith((" ", "\t")) or not lines[i].strip():
            i += 1
            continue
        break
    exc = [l for l in lines[i:] if l.strip() not in CHAIN_LINES]
    while exc and not exc[-1].strip():
        exc.pop()
    return frames, exc


def is_marker(code: str) -> bool:
    """Python 3.11's carets under a frame's code (^^^^ or ~~~^^^)."""
    return not set(code) - set("^~ ")


def frame_lines(frames: list) -> list:
    """The frames that matter: the user's, and the innermost torch frame (the one that raised)."""
    keep = [f for f in frames if is_user_frame(f[0])]
    # The innermost torch frame raised (or called the compiler that did: triton's own frame is kept too).
    for inner in (("torch", "functorch"), ("triton",)):
        found = [f for f in frames if package_of(f[0]) in inner]
        if found and found[-1] not in keep:
            keep.append(found[-1])
    keep.sort(key=frames.index)
    out = []
    for file, line, name, code in keep:
        out.append(f'  File "{file}", line {line}, in {name}')
        if code:
            out.append(f"    {code}")
    return out


def compiler_errors(lines: list, context: int = 3) -> list:
    """A compiler's `error:` lines, each with the lines gcc/clang print after it (the failing source line and its
    caret) and the `In function` line before it; warnings, notes and include chains dropped."""
    out: list = []
    for i, line in enumerate(lines):
        if not COMPILER_ERROR.search(line) or "warning:" in line:
            continue
        if i > 0 and "In function" in lines[i - 1] and lines[i - 1] not in out:
            out.append(lines[i - 1])
        out.append(line)
        for follow in lines[i + 1 : i + 1 + context]:
            if (
                COMPILER_ERROR.search(follow)
                or "warning:" in follow
                or follow.startswith(("In file included", "                 from "))
            ):
                break
            if follow.strip():
                out.append(follow)
    return out


def triton_error(lines: list) -> list:
    """Triton's CompilationError: 'at L:C:' then the kernel's source up to the failing line, its caret and the
    reason; the failing line and the reason are kept, with two lines of source before."""
    for i, line in enumerate(lines):
        if re.search(r"CompilationError: at \d+:\d+:", line):
            body = lines[i + 1 :]
            caret = next((j for j, l in enumerate(body) if l.strip().startswith("^")), None)
            if caret is None:
                return [line] + body[:8]
            return [line] + body[max(0, caret - 3) : caret + 1] + [l for l in body[caret + 1 : caret + 4] if l.strip()]
    return []


def exception_lines(exc: list, max_message: int = 8) -> list:
    """An exception's type and message: a compile error cut to its error lines; a long message to its head."""
    exc = [l for l in exc if not l.startswith(NOISE)]
    while exc and not exc[-1].strip():
        exc.pop()
    triton = triton_error(exc)
    if triton:
        return triton[:16]
    errors = compiler_errors(exc)
    if errors:
        head = [exc[0]] if exc else []
        return head + ["(compiler output: error lines only, warnings dropped)"] + errors[:16]
    if len(exc) <= max_message:
        return exc
    return exc[:max_message] + [f"[... {len(exc) - max_message} more lines of the message in the full log ...]"]


def exception_summary(text: str, limit: int = LIMIT) -> str | None:
    """The last exception chain in text, its frames reduced to those that matter; None when there is none."""
    chain = last_chain(text)
    if not chain:
        return None
    parts = []
    for k, (frames, exc) in enumerate(chain):
        if k:
            parts.append("")
            parts.append("The above exception was the direct cause of the following exception:")
            parts.append("")
        parts.append(TRACEBACK)
        parts.extend(frame_lines(frames))
        parts.extend(exception_lines(exc))
    return fit(parts, limit)


def crash_summary(text: str, signal: str | None = None, limit: int = LIMIT) -> str | None:
    """faulthandler's dump reduced to what the C++ runtime said before it (an uncaught exception's type and
    what()), the signal, and the faulting thread's stack."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if FAULT.match(l)), None)
    out = (
        [*abort_cause(lines, start), lines[start]]
        if start is not None
        else ([f"Process killed by {signal}"] if signal else [])
    )
    blocks = thread_blocks(lines, 0 if start is None else start + 1)
    if not blocks:
        return "\n".join(out) if out else None
    head, frames = faulting_thread(blocks)
    return fit(out + ["", head] + crash_frames(frames), limit)


# What the C++ runtime prints before abort() when a kernel or an extension throws (std::terminate), or glibc's
# heap checks fail: the cause faulthandler's "Aborted" does not say.
ABORT_CAUSE = re.compile(
    r"^(terminate called |\s+what\(\):|.*Assertion `.*' failed|(double free|free\(\)|"
    r"malloc\(\)|munmap_chunk\(\)|corrupted )|Exception raised from )"
)


def abort_cause(lines: list, fault: int, most: int = 8) -> list:
    """The lines just before faulthandler's 'Fatal Python error' from the first runtime message on (at most
    `most`): 'terminate called after throwing an instance of ...' and its what(), an assert, a heap check."""
    first = None
    for i in range(fault - 1, max(-1, fault - 1 - most), -1):
        if not lines[i].strip():
            break
        if ABORT_CAUSE.match(lines[i]):
            first = i
    return lines[first:fault] if first is not None else []


def thread_blocks(lines: list, begin: int) -> list:
    """faulthandler's thread stacks from line `begin` on: [(header, frames)], in the order it printed them."""
    blocks = []
    for i in range(begin, len(lines)):
        if THREAD.match(lines[i]):
            frames = []
            for l in lines[i + 1 :]:
                if not l.startswith("  ") or THREAD.match(l):
                    break
                frames.append(l)
            blocks.append((lines[i], frames))
    return blocks


def faulting_thread(blocks: list) -> tuple:
    """The thread that faulted: the one faulthandler calls 'Current thread'; when it names none (the crash came
    in C++ code that had released the GIL, e.g. a compiled kernel), the one running inductor's generated module,
    else the oldest (the main thread, which faulthandler prints last)."""
    for block in blocks:
        if block[0].startswith("Current thread"):
            return block
    for block in blocks:
        if any((m := FH_FRAME.match(l)) and GENERATED.search(m["file"]) for l in block[1]):
            return block
    return blocks[-1]


def crash_frames(frames: list, innermost: int = 6) -> list:
    """A faulthandler stack (most recent call first) cut to what matters: the innermost frames, where it died,
    and the user's frames; each run of other frames (torch's, the interpreter's) becomes one line."""
    out, skipped = [], 0
    for i, line in enumerate(frames):
        m = FH_FRAME.match(line)
        # reprokit's trial machinery is not in the user's own run; inductor's generated module is, though it may
        # live in reprokit's compile cache (~/.cache/reprokit/compile/...)
        ours = bool(m and "/reprokit/" in m["file"] and not GENERATED.search(m["file"]))
        if not ours and (i < innermost or (m and is_user_frame(m["file"]))):
            if skipped:
                out.append(f"  [... {skipped} frames not shown ...]")
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(f"  [... {skipped} frames not shown ...]")
    return out


def accuracy_summary(note: str, repro_output: str = "", limit: int = LIMIT) -> str:
    """The mismatch: the accuracy check's line (max abs/rel, where, eager/compiled/float64) and the repro's own
    AssertionError when it printed one."""
    out = []
    if note:
        out.append("Accuracy check (compiled vs eager, judged against a float64 reference):")
        out.extend("  " + part.strip() for part in note.split("; ") if part.strip())
    asserted = [l for l in repro_output.splitlines() if l.startswith("AssertionError")]
    if asserted:
        out.append("The minimal repro's own check:")
        out.append(asserted[-1])
    return fit(out or ["compiled output differs from eager (no measure recorded)"], limit)


def fit(lines: list, limit: int = LIMIT) -> str:
    """At most `limit` lines (long ones cut at 400 characters): the head and the tail kept, the middle marked."""
    lines = [l if len(l) <= 400 else l[:400] + " [...]" for l in lines]
    if len(lines) > limit:
        head = limit // 3
        lines = lines[:head] + [f"[... {len(lines) - limit + 1} lines cut ...]"] + lines[-(limit - head - 1) :]
    return "\n".join(lines).strip("\n")


def hang_summary(stacks: str, limit: int = LIMIT) -> str | None:
    """Where a timed-out trial waited: its main thread's stack; with several processes (data.ranks.rank_stacks
    heads each "== rank<i> =="), each one's, so ranks waiting in different collectives show side by side."""
    parts = re.split(r"^== (.+) ==$", stacks, flags=re.M)
    if len(parts) < 3:
        found = crash_summary(stacks, None, limit)
        return "Timed out; the main thread's stack:\n" + found if found else None
    each = max(8, limit // max(1, (len(parts) - 1) // 2))
    said = [
        f"== {who} ==\n{crash_summary(text, None, each)}"
        for who, text in zip(parts[1::2], parts[2::2])
        if crash_summary(text, None, each)
    ]
    return "Timed out; where each process waited:\n" + "\n\n".join(said) if said else None


def decisive_error(
    kind: str, text: str, *, note: str = "", stacks: str = "", signal: str | None = None, limit: int = LIMIT
) -> str:
    """The decisive error of one failure of `kind` (exception, crash, accuracy, hang, exit, ...), from its
    recorded output (stderr or traceback text), the accuracy note and faulthandler's stacks."""
    if kind == "accuracy":
        return accuracy_summary(note, text, limit)
    if kind == "crash":
        found = crash_summary(text, signal, limit) or crash_summary(stacks, signal, limit)
        if found:
            return found
    if kind == "hang":
        found = hang_summary(stacks, limit)
        if found:
            return found
    found = exception_summary(text, limit)
    if found:
        return found
    tail = [l for l in text.rstrip().splitlines() if l.strip()]
    return fit(tail[-limit:] or ["(nothing recorded)"], limit)
