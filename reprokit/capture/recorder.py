"""The recorder inside the user's job: torch.compile keeps the user's own backend, wrapped so that each graph
Dynamo hands over is noted (light metadata, in memory) and the first one that fails to compile or to run is
written as a case folder (fx/capture.capture_graph, as a trial's capture writes it) with failure.json beside it.
The job itself goes on, and fails, exactly as it would have."""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
import time
import traceback
import weakref
from typing import TYPE_CHECKING, Any

from reprokit.capture import files
from reprokit.capture.facts import process_group, script_path
from reprokit.capture.recent_call import RecentCalls
from reprokit.capture.summary import merge_summary
from reprokit.data.rundir import write_json_atomic

if TYPE_CHECKING:
    from reprokit.capture.check import CheckState
    from reprokit.capture.crash import Ahead

# (k, gm, args, ctx, compile_args) of one compiled call: its five fields by name, so `failed_at(*call, ...)` checks.
Call = tuple[int | None, Any, tuple, Any, Any]


class Recorder:
    """What one process of the job saw: the graphs its backend got, and its first failure."""

    def __init__(self, root: str, max_input_bytes: int):
        self.root, self.max_input_bytes = root, max_input_bytes
        self.group_rank: int | None = None  # the default process group's, once seen (it may be destroyed before exit)
        self.started = time.monotonic()
        self.graphs: list = []  # per graph: node count and input shapes, nothing heavier (the 5% budget)
        self.compiles = 0
        self.failed = False
        self.last_call: Call | None = None  # the latest compiled call
        self.backward_call: Call | None = None  # the same, of the graph whose backward started last
        self.ahead: Ahead | None = None  # once this process compiles
        self.inflight: tuple | None = None  # (phase, graph, since when) while a graph compiles or runs
        self.longest_compile = 0.0  # seconds, of the graphs that compiled: a hang's offline limit is set by it
        self.ending = False  # a signal is ending the job (capture/hang.py)
        self.ended_in: str | None = None  # what it was doing then: "compiling graph 1", "waiting in a collective"
        self.compile_timeout: float | None = None  # --compile-timeout (capture/deadline.py)
        self.fall_back = False  # --fall-back-to-eager
        self.fell_back: list = []  # graphs that compiled past the limit and ran eagerly
        self.recent = RecentCalls(max_input_bytes)  # each graph's latest call, kept in memory (capture/recent_call)
        self.exit_error: str | None = None  # how the process is ending in error: sys.exit(1), an uncaught exception
        self.group: dict | None = None  # the job's process group, as the first graph compiled
        self.kept_calls: list = []  # the graphs whose latest call was written, as it ended so
        self.check: CheckState | None = None  # --check-accuracy (capture/check.py)
        self.max_graph_bytes: int | None = None  # --max-graph-input-bytes (None: fx/keep's default)
        self.inputs_on_disk = False  # --keep-inputs-on-disk

    @property
    def rank(self) -> str:
        """This process's rank, from the process group once it is initialised (files.current_rank)."""
        group = process_group()
        if group is not None:
            self.group_rank = group["rank"]
        return files.current_rank(self.group_rank)

    def graph_seen(self, gm, example_inputs) -> int:
        """Note a graph Dynamo handed the backend; its index in this process."""
        self.graphs.append({"nodes": len(gm.graph.nodes), "inputs": [_shape(t) for t in example_inputs]})
        self.group = self.group or process_group()  # as it compiled: a job may destroy its group before it exits
        return len(self.graphs) - 1

    def before_compile(self, k, gm, example_inputs, ctx, compile_args) -> None:
        """Write graph k out ahead of a crash (no Python runs after a fatal signal), marked compiling; never
        raises (a capture that cannot write ahead still captures what raises)."""
        from reprokit import compat
        from reprokit.capture.crash import Ahead, written_ahead

        rank = self.rank
        facts = {
            "rank": rank,
            "script": script_path(),
            "torch_version": compat.TORCH_VERSION,
            "process_group": process_group(),
        }
        if self.ahead is not None:  # the process group appeared since its first graph: its folder follows the rank
            try:
                self.ahead.follow(files.rank_dir(self.root, rank), facts)
            except OSError as e:
                print(f"reprokit capture: written ahead under another rank's folder: {e}", file=sys.stderr)
        self.ahead, failed = written_ahead(
            self.ahead,
            lambda: Ahead(files.rank_dir(self.root, rank), facts, own_faulthandler=True),
            k,
            gm,
            example_inputs,
            self.max_input_bytes,
            compile_args=compile_args,
            script=script_path(),
            context=ctx,
        )
        if failed is not None:
            print(
                f"reprokit capture: graph {k} not written ahead of a crash: {type(failed).__name__}: {failed}",
                file=sys.stderr,
            )

    def mark(self, text: str) -> None:
        """Which graph is compiling or running now ("" for none), where a crash leaves it readable."""
        phase, _, k = text.partition(" ")
        self.inflight = (phase, int(k), time.monotonic()) if k.isdigit() else None
        if self.ahead is not None:
            self.ahead.marker.set(text)

    def watch_backward(self, call: Call, out) -> None:
        """Note when graph call[0]'s backward runs: hooks on the autograd node of its outputs fire just before and
        after it. Its arguments are held weakly until then (a job that frees its activations keeps that memory),
        and strongly only from then on, replacing the graph before."""
        k, gm, args, ctx, compile_args = call
        held = [weakref.ref(a) if _weakly(a) else a for a in args]
        started = f"backward {k}"

        def before(grad_outputs):
            alive = [a() if isinstance(a, weakref.ref) else a for a in held]
            if all(a is not None for a in alive):
                self.backward_call = (k, gm, tuple(alive), ctx, compile_args)
            self.mark(started)

        def after(grad_inputs, grad_outputs):
            self.mark("")  # a crash after it (the optimizer's step, eager code) is no graph's

        nodes = {
            id(t.grad_fn): t.grad_fn
            for t in (out if isinstance(out, (list, tuple)) else (out,))
            if getattr(t, "requires_grad", False) and getattr(t, "grad_fn", None) is not None
        }
        for node in nodes.values():
            node.register_prehook(before)
            node.register_hook(after)

    def failed_in_backward(self, exc: BaseException) -> None:
        """A compiled graph's backward failed: the graph whose backward started last, else the latest call's."""
        call = self.backward_call or self.last_call
        if call is not None:
            self.failed_at(*call, exc, "backward")

    def failed_at(self, k, gm, inputs, ctx, compile_args, exc: BaseException, phase: str, extra=None) -> None:
        """Write graph k's case folder and failure.json (with `extra` in it), once per process; never raises (the
        job's own error is the one the user must see)."""
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C at a graph that would not end: a hang, not its error
            from reprokit.capture.hang import record_hang

            record_hang(self, "SIGINT")
            return
        if self.failed:
            return
        self.failed = True
        try:
            self._write_failure(k, gm, inputs, ctx, compile_args, exc, phase, extra)
        except Exception as e:  # the capture is lost, the job's failure is not
            print(f"reprokit capture: could not write the failing graph: {type(e).__name__}: {e}", file=sys.stderr)

    def _write_failure(self, k, gm, inputs, ctx, compile_args, exc, phase, extra=None) -> None:
        from reprokit.fx.capture import capture_graph
        from reprokit.fx.keep import Caps, summary

        out = files.rank_dir(self.root, self.rank)
        note, record = None, {}
        if gm is not None:
            case = os.path.join(out, files.CASE)
            note = capture_graph(
                gm,
                list(inputs),
                case,
                max_input_bytes=self.max_input_bytes,
                caps=Caps(self.max_input_bytes, self.max_graph_bytes, on_disk=self.inputs_on_disk),
                compile_args=compile_args,
                script=script_path(),
                context=ctx,
            )
            with open(os.path.join(case, "meta.json")) as f:
                record = {"inputs": summary(json.load(f))}  # which inputs were kept, which replaced
        write_json_atomic(
            os.path.join(out, files.FAILURE), {**failure_record(self, k, exc, phase, note), **record, **(extra or {})}
        )

    def exiting(self) -> None:
        """At exit: a process ending in error with no failure of a compiled graph (the job's own check, an assert,
        a NaN guard) writes each graph's latest call and exit.json, for the offline accuracy question; then its
        summary line."""
        if self.exit_error and not self.failed and self.recent.kept():
            try:
                self._write_calls()
            except Exception as e:  # the capture is lost, the job's failure is not
                print(f"reprokit capture: could not write the graphs' calls: {type(e).__name__}: {e}", file=sys.stderr)
        self.write_summary()

    def _write_calls(self) -> None:
        from reprokit import compat

        out = files.rank_dir(self.root, self.rank)
        self.kept_calls = self.recent.write(out, script_path(), process_group() or self.group)
        record = {
            "kind": "exit",
            "exit": self.exit_error,
            "graphs": self.kept_calls,
            "graphs_seen": len(self.graphs),
            "rank": self.rank,
            "process_group": process_group() or self.group,
            "torch_version": compat.TORCH_VERSION,
            "script": script_path(),
        }
        write_json_atomic(os.path.join(out, files.EXIT), record)

    def write_summary(self) -> None:
        """This process's line in capture.json (only a process that compiled something has one); what was
        written ahead of a crash goes (the process did not crash)."""
        ahead, self.ahead = self.ahead, None  # no store into a closed map from here on
        if ahead is not None:
            ahead.finish()
        if not self.compiles and not self.failed:
            return
        try:
            merge_summary(
                self.root,
                self.rank,
                {
                    "graphs": len(self.graphs),
                    "compiles": self.compiles,
                    "failed": self.failed,
                    **({"kept_calls": self.kept_calls} if self.kept_calls else {}),
                    "seconds": round(time.monotonic() - self.started, 3),
                    **({"fell_back": self.fell_back} if self.fell_back else {}),
                    **(self.check.summary() if self.check else {}),
                    **({"ended_in": self.ended_in} if self.ended_in else {}),
                },
            )
        except OSError as e:
            print(f"reprokit capture: could not write {files.SUMMARY}: {e}", file=sys.stderr)


def failure_record(rec: Recorder, k, exc: BaseException, phase: str, note) -> dict:
    """failure.json: the signature the classifier gives the exception, its traceback, where it happened."""
    from reprokit import compat
    from reprokit.child.classify import classify_exception
    from reprokit.child.state import TrialState
    from reprokit.data.records import TrialSpec

    result = classify_exception(TrialState(TrialSpec(mode="script", stage="user"), rec.root), exc)
    return {
        "kind": result["kind"],
        "signature": result["signature"],
        "phase": phase,
        "graph": k,
        "graphs_seen": len(rec.graphs),
        "rank": rec.rank,
        "process_group": process_group(),
        "torch_version": compat.TORCH_VERSION,
        "script": script_path(),
        "note": note or "",
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-20000:],
    }


def _weakly(a) -> bool:
    """Whether an argument is held by a weak reference (a tensor) rather than as it is (a size, a flag)."""
    try:
        weakref.ref(a)
    except TypeError:
        return False
    return hasattr(a, "shape")


def _shape(t) -> list | str:
    shape = getattr(t, "shape", None)
    return list(shape) if shape is not None else type(t).__name__


def install(rec: Recorder) -> None:
    """torch.compile with the user's backend wrapped; the summary written at exit; an uncaught exception from
    Dynamo itself (no graph reached a backend) noted as a failure with no graph."""
    import torch

    from reprokit.capture import hang
    from reprokit.capture.wrap import capturing_compile

    torch.compile = capturing_compile(rec, torch.compile)
    hang.install(rec)
    # loss.backward() calls torch.autograd.backward: a compiled backward's failure is seen there, before the
    # script's own except clause (a training loop that logs and exits) or another thread can hide it.
    torch.autograd.backward = _seeing_backward(rec, torch.autograd.backward)
    torch.autograd.grad = _seeing_backward(rec, torch.autograd.grad)
    atexit.register(rec.exiting)
    sys.exit = _noting_exit(rec, sys.exit)
    previous = sys.excepthook

    def excepthook(kind, exc, tb):
        if not issubclass(kind, KeyboardInterrupt):  # Ctrl-C: a hang's, recorded by capture/hang
            rec.exit_error = rec.exit_error or f"{kind.__name__}: {str(exc)[:200]}"
        if not rec.failed and rec.last_call and _in_compiled_backward(tb):
            # A compiled graph's backward (compiled lazily, at the first loss.backward()) failed: the graph whose
            # backward started last is written out, to be run forward and backward. (Its traceback passes through
            # Dynamo's frames too, so this is asked first.)
            rec.failed_in_backward(exc)
        elif not rec.failed and rec.compiles and _in_dynamo(tb):
            rec.failed_at(None, None, (), None, None, exc, "dynamo")
        previous(kind, exc, tb)

    sys.excepthook = excepthook


def _noting_exit(rec: Recorder, exit):
    """sys.exit as it is, noting a status that is an error (the job's own check ending it): no other hook sees
    SystemExit (sys.excepthook does not, and atexit is not told the status)."""

    @functools.wraps(exit)
    def noting(status=None):
        if status is not None and status != 0:
            rec.exit_error = rec.exit_error or f"sys.exit({status!r})"
        exit(status)

    return noting


def _seeing_backward(rec: Recorder, function):
    """`function` (torch.autograd.backward or grad) as it is, noting a compiled graph's backward that raises."""

    @functools.wraps(function)
    def seeing(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except BaseException as e:
            if not rec.failed and rec.last_call and _in_compiled_backward(e.__traceback__):
                rec.failed_in_backward(e)
            raise

    return seeing


def _in_compiled_backward(tb) -> bool:
    """Whether the traceback passes through AOT autograd's runtime (a compiled graph's backward)."""
    from reprokit import compat

    aot = os.path.join(compat.TORCH_ROOT, "_functorch", "_aot_autograd") + os.sep
    return any(f.filename.startswith(aot) for f in traceback.extract_tb(tb))


def _in_dynamo(tb) -> bool:
    """Whether the traceback passes through Dynamo's own frames (a tracing failure, before any backend)."""
    from reprokit import compat

    dynamo = os.path.join(compat.TORCH_ROOT, "_dynamo") + os.sep
    return any(f.filename.startswith(dynamo) for f in traceback.extract_tb(tb))
