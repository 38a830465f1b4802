"""Runs inside one trial process: applies the stage, runs the script or a captured graph, classifies.

Invoked as `python -m reprokit.child.main SPEC_JSON TRIAL_DIR`. Writes TRIAL_DIR/result.json atomically;
when the process dies by a signal or is killed on timeout the parent classifies from the exit status,
TRIAL_DIR/state.json (written as graphs are compiled) and TRIAL_DIR/stacks.txt (faulthandler).
"""
from __future__ import annotations

import faulthandler
import json
import os
import runpy
import signal
import sys
import time
import traceback

from reprokit.data.records import TrialSpec
from reprokit.data import signature as sig
from reprokit.data.rundir import write_json_atomic

# Importing torch is deliberately deferred until after faulthandler is armed: a hang in import is a hang too.


class AccuracyFailure(Exception):
    """Raised by the router when a compiled graph's outputs differ from the same graph run eagerly."""


class Trial:
    def __init__(self, spec: TrialSpec, trial_dir: str):
        self.spec = spec
        self.dir = trial_dir
        self.graphs = 0
        self.compiled = False
        self.user_backend = None
        self.compile_args = None
        self.counters: dict = {}
        self.bisect_detail = None
        self.failed_graph = None
        self.accuracy_failure = None
        self.flag_values = None
        self.user_configs = None
        self.config_defaults = None
        self.note = ""
        self.backward_ran = set()
        # doctor and `bisect --kind slow`: per compiled callable, each call's seconds; graph breaks seen
        self.observe = spec.observe
        self.callables: list[dict] = []
        self.breaks: list[dict] = []
        self._depth = 0

    # -- bookkeeping -------------------------------------------------------------------------
    def save_state(self):
        write_json_atomic(os.path.join(self.dir, "state.json"), self.state())

    def state(self) -> dict:
        return {
            "graphs": self.graphs,
            "compiled": self.compiled,
            "user_backend": self.user_backend,
            "compile_args": self.compile_args,
            "counters": {f"{b}/{s}": n for (b, s), n in self.counters.items()},
            "bisect_detail": self.bisect_detail,
            "failed_graph": self.failed_graph,
            "flag_values": self.flag_values,
            "user_configs": self.user_configs,
            "config_defaults": self.config_defaults,
            "backward_graphs": sorted(self.backward_ran),
            "note": self.note,
        }

    # -- torch's bisect counters ------------------------------------------------------------
    def install_probe(self):
        from reprokit import compat

        target = self.spec.subsystem

        def on_call(backend, subsystem, nth, debug_info):
            key = (backend, subsystem)
            self.counters[key] = max(self.counters.get(key, 0), nth + 1)
            if not target or backend != target["backend"]:
                return False
            if subsystem == target.get("name") and nth == target["max"]:
                self.bisect_detail = describe_debug_info(debug_info)
            return subsystem in target.get("names", ())

        compat.probe_bisect_counters(on_call)

    # -- the router ---------------------------------------------------------------------------
    def install_router(self):
        import torch

        original_compile = torch.compile
        trial = self

        def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                    options=None, disable=False):
            from reprokit import compat

            trial.compiled = True
            trial.user_backend = compat.backend_name(backend)
            trial.compile_args = {"backend": trial.user_backend, "mode": mode, "options": _plain(options),
                                  "dynamic": dynamic, "fullgraph": fullgraph}
            # `bisect --kind slow` asks what another mode or dynamic setting would do
            mode = trial.spec.compile_overrides.get("mode", mode)
            dynamic = trial.spec.compile_overrides.get("dynamic", dynamic)
            router = trial.make_router(backend, mode, options, dynamic)
            site = user_frame(sys._getframe(1))

            def build(m):
                compiled = compat.compile_keeping_backend(original_compile, m, fullgraph=fullgraph, dynamic=dynamic,
                                                          backend=router, disable=disable)
                return trial.timed(compiled, m, site) if trial.observe else compiled

            return build if model is None else build(model)

        torch.compile = compile

    def timed(self, compiled, original, site):
        """The compiled callable, timing each outermost call and noting whether it compiled anything."""
        import torch

        from reprokit import compat

        owner = getattr(original, "__self__", original)  # model.compile() hands torch.compile a bound method
        label = type(owner).__name__ if isinstance(owner, torch.nn.Module) else getattr(original, "__qualname__",
                                                                                          repr(original))
        record = {"label": label, "site": site, "seconds": [], "compiled": []}
        self.callables.append(record)
        trial = self

        def call(fn, *args, **kwargs):
            if trial._depth:
                return fn(*args, **kwargs)
            trial._depth += 1
            frames = compat.frames_compiled()
            sync = torch.cuda.synchronize if torch.cuda.is_available() and torch.cuda.is_initialized() else None
            try:
                if sync:
                    sync()
                t0 = time.perf_counter()
                out = fn(*args, **kwargs)
                if sync:
                    sync()
                record["seconds"].append(time.perf_counter() - t0)
                record["compiled"].append(compat.frames_compiled() != frames)
                return out
            finally:
                trial._depth -= 1

        if isinstance(compiled, torch.nn.Module):
            inner = compiled.forward
            compiled.forward = lambda *a, **k: call(inner, *a, **k)
            return compiled

        import functools

        @functools.wraps(compiled)
        def timed_fn(*args, **kwargs):
            return call(compiled, *args, **kwargs)

        return timed_fn

    def observations(self) -> dict:
        from reprokit import compat

        return {"callables": self.callables, "breaks": self.breaks, "metrics": compat.compilation_metrics(),
                "counters": compat.dynamo_counters(), "recompile_limit": compat.recompile_limit()}

    def make_router(self, user_backend, mode, options, dynamic):
        def router(gm, example_inputs):
            k = self.graphs
            self.graphs += 1
            spec = self.spec
            stage = spec.stage if spec.only_graph in (None, k) else spec.other_stage
            self.save_graph_code(k, gm)
            if self.flag_values is None:
                self.record_configs(options)
            budget = spec.max_input_bytes
            backward_capture = spec.capture == k and spec.capture_backward
            if spec.capture == k and not backward_capture:
                from reprokit.fx.capture import capture_graph

                self.note = capture_graph(gm, example_inputs, os.path.join(self.dir, "case"),
                                          max_input_bytes=budget, compile_args=self.compile_args)
            self.save_state()
            try:
                if backward_capture:
                    compiled = self.compile_capturing_backward(gm, example_inputs, mode, options, dynamic, budget)
                else:
                    compiled = compile_with_stage(stage, gm, example_inputs, user_backend, mode, options, dynamic,
                                                  spec.config)
            except BaseException:
                self.failed_graph = k
                self.save_state()
                raise
            self.save_state()  # counters after compile survive a crash at run time
            check = spec.check_accuracy and stage != "none" and spec.only_graph in (None, k)
            return self.wrap_compiled(k, gm, compiled, check)

        return router

    def compile_capturing_backward(self, gm, example_inputs, mode, options, dynamic, budget):
        """Inductor, saving the backward graph AOT autograd hands it (compiled when backward first runs)."""
        from reprokit import compat
        from reprokit.fx.capture import capture_graph

        def on_graph(aten_gm, inputs, is_backward):
            if is_backward:
                self.note = capture_graph(aten_gm, inputs, os.path.join(self.dir, "case"), max_input_bytes=budget,
                                          compile_args={**(self.compile_args or {}), "graph": "backward"})
                self.save_state()

        patches = dict(self.spec.config or {})
        return compat.inductor_backend_observing(mode, {**(options or {}), **patches}, dynamic, on_graph)(
            gm, example_inputs)

    def wrap_compiled(self, k, gm, compiled, check_accuracy):
        calls = [0]

        def run(*args):
            calls[0] += 1
            reference = None
            if check_accuracy and calls[0] <= 2:
                reference = eager_reference(gm, args)
            try:
                out = compiled(*args)
            except BaseException:
                self.failed_graph = k
                self.save_state()
                raise
            if reference is not None:
                mismatch = compare_outputs(reference, out)
                if mismatch:
                    self.failed_graph = k
                    self.accuracy_failure = f"graph {k}: {mismatch}"
                    self.save_state()
                    raise AccuracyFailure(self.accuracy_failure)
            self.watch_backward(k, out)
            return out

        return run

    def watch_backward(self, k, out):
        import torch

        def mark(grad):
            self.backward_ran.add(k)
            return grad

        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor) and t.requires_grad and k not in self.backward_ran:
                t.register_hook(mark)

    def save_graph_code(self, k, gm):
        path = os.path.join(self.dir, "graphs", f"graph_{k}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(gm.code)

    def record_configs(self, options):
        from reprokit import compat
        from reprokit.data.stages import INDUCTOR_FLAGS

        values = compat.inductor_config_values(INDUCTOR_FLAGS)
        for name, value in (options or {}).items():
            if name in values:
                values[name] = value
        self.flag_values = {k: v for k, v in values.items() if isinstance(v, bool)}
        self.user_configs = compat.non_default_configs()
        self.config_defaults = compat.config_defaults(self.user_configs)

    # -- running ------------------------------------------------------------------------------
    def run_script(self):
        spec = self.spec
        sys.argv = [spec.script, *spec.argv]
        os.chdir(spec.cwd or os.path.dirname(spec.script))
        sys.path[0] = os.path.dirname(os.path.abspath(spec.script))
        runpy.run_path(spec.script, run_name="__main__")

    def run_graph(self):
        from reprokit.fx.materialize import run_case

        self.compiled = True
        spec = self.spec
        self.note = run_case(spec.case, spec.edit, spec.stage, spec.config, spec.check_accuracy,
                             spec.run_backward, self, out_dir=self.dir)


def local_modules(script: str) -> list:
    """Files of modules the script imported from its own folder tree (not site-packages, not reprokit)."""
    root = os.path.dirname(os.path.abspath(script))
    out = set()
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if not path:
            continue
        path = os.path.abspath(path)
        if path.startswith(root + os.sep) and "site-packages" not in path and path.endswith(".py"):
            out.add(path)
    out.discard(os.path.abspath(script))
    return sorted(out)


def user_frame(frame) -> list | None:
    """[file, line] of the innermost caller outside torch and reprokit: where the user called torch.compile."""
    import torch

    skip = (os.path.dirname(os.path.abspath(torch.__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(skip) and not frame.f_code.co_filename.startswith("<"):
            return [frame.f_code.co_filename, frame.f_lineno]
        frame = frame.f_back
    return None


def describe_debug_info(debug_info) -> str | None:
    """What a subsystem application was: for lowerings, the FX node behind torch's repr(n) callback."""
    if debug_info is None:
        return None
    try:
        import torch.fx

        for cell in getattr(debug_info, "__closure__", None) or ():
            node = cell.cell_contents
            if isinstance(node, torch.fx.Node):
                return f"{node.target} ({node.format_node()})"
        return str(debug_info())
    except Exception as e:  # the description is a nicety; never let it fail a trial
        return f"<unavailable: {type(e).__name__}>"


def compile_with_stage(stage, gm, example_inputs, user_backend, mode, options, dynamic, config):
    from reprokit import compat

    patches = dict(config or {})
    if stage == "eager":
        return gm.forward
    if stage in ("aot_eager", "aot_eager_decomp_partition"):
        return compat.lookup_backend(stage)(gm, example_inputs)
    if stage == "inductor":
        return compat.inductor_backend(mode, {**(options or {}), **patches}, dynamic)(gm, example_inputs)
    if stage == "user":
        if user_backend == "inductor" or user_backend is None:
            return compat.inductor_backend(mode, {**(options or {}), **patches}, dynamic)(gm, example_inputs)
        if isinstance(user_backend, str):
            user_backend = compat.lookup_backend(user_backend)
        return user_backend(gm, example_inputs)
    raise ValueError(f"unknown stage {stage!r}")


def eager_reference(gm, args):
    """(eager result, float64 result) of the graph on copies of args; None where it cannot be had."""
    import copy

    import torch

    from reprokit import compat

    def clone(a):
        return a.detach().clone() if isinstance(a, torch.Tensor) else a

    try:
        with torch.no_grad():
            ref = gm(*[clone(a) for a in args])
            fp64 = None
            try:
                m64, a64 = compat.cast_to_fp64(copy.deepcopy(gm), [clone(a) for a in args])
                fp64 = m64(*a64)
            except Exception:
                fp64 = None
        return (ref, fp64)
    except Exception:
        return None


def compare_outputs(reference, out) -> str | None:
    """A one-line description of the mismatch, or None when the outputs agree."""
    import torch

    from reprokit import compat

    ref, fp64 = reference
    refs = ref if isinstance(ref, (list, tuple)) else (ref,)
    outs = out if isinstance(out, (list, tuple)) else (out,)
    f64s = fp64 if isinstance(fp64, (list, tuple)) else (fp64,) * len(refs)
    for i, (r, o, r64) in enumerate(zip(refs, outs, f64s)):
        if not isinstance(r, torch.Tensor) or not isinstance(o, torch.Tensor):
            continue
        o = o.detach()
        if r.dtype != o.dtype or r.shape != o.shape:
            return f"output {i}: {o.dtype}{list(o.shape)} vs eager {r.dtype}{list(r.shape)}"
        if r.is_floating_point() or r.is_complex():
            if not compat.same(r, o, fp64_ref=r64 if isinstance(r64, torch.Tensor) else None):
                diff = (o.double() - r.double()).abs()
                diff = diff[~torch.isnan(diff)] if diff.numel() else diff
                worst = float(diff.max()) if diff.numel() else float("nan")
                return f"output {i}: max abs diff {worst:.3g}"
        elif not torch.equal(r, o):
            # torch's after_aot accuracy check skips non-float outputs; a wrong index is still wrong.
            return f"output {i}: {int((r != o).sum())} of {r.numel()} {r.dtype} elements differ"
    return None


def _plain(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def classify_exception(trial: Trial, exc: BaseException) -> dict:
    from reprokit import compat

    if trial.accuracy_failure or isinstance(exc, AccuracyFailure):
        s = sig.Signature("accuracy", None, "compiled output differs from eager", None)
        return {"kind": "accuracy", "signature": s.to_dict(), "note": trial.accuracy_failure or str(exc)}
    frames = [(f.filename, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    s = sig.for_exception(type(exc).__name__, str(exc), frames, compat.TORCH_ROOT)
    text = str(exc)
    if type(exc).__name__ == "OutOfMemoryError" or "out of memory" in text.lower() or \
            "can't allocate memory" in text:  # CUDA's and the CPU allocator's words for it
        # Not the user's bug nor the compiler's: this trial could not say anything.
        return {"kind": "skip", "signature": sig.Signature("skip", type(exc).__name__, "out of memory").to_dict(),
                "note": "out of memory: the trial was skipped, not counted as the bug"}
    if any(m in text for m in sig.CUDA_FAULTS):
        # A device-side assert or illegal access poisons the CUDA context: its own kind, named by the fault.
        fault = next(m for m in sig.CUDA_FAULTS if m in text)
        s = sig.Signature("cuda_fault", type(exc).__name__, fault, s.frame)
        return {"kind": "cuda_fault", "signature": s.to_dict()}
    return {"kind": "exception", "signature": s.to_dict()}


def main(argv: list[str]) -> int:
    spec_path, trial_dir = argv[1], argv[2]
    with open(spec_path) as f:
        spec = TrialSpec.from_dict(json.load(f))
    rank = os.environ.get("RANK", "0") if int(os.environ.get("WORLD_SIZE", "1")) > 1 else "0"
    if rank != "0":
        # Under torchrun every rank is a child: rank 0 answers in the trial folder, the others beside it.
        trial_dir = os.path.join(trial_dir, f"rank{rank}")
        os.makedirs(trial_dir, exist_ok=True)
    stacks = open(os.path.join(trial_dir, "stacks.txt"), "w")
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)

    trial = Trial(spec, trial_dir)
    started = time.monotonic()
    result: dict
    exit_code = 0
    import_seconds = None
    try:
        import torch  # noqa: F401

        import_seconds = time.monotonic() - started
        from reprokit import compat

        for name, value in (spec.config or {}).items():
            if name.startswith("functorch."):
                compat.set_functorch_config(name.split(".", 1)[1], value)  # global: aot reads it lazily
        trial.install_probe()
        if spec.mode == "script":
            trial.install_router()
            if trial.observe:
                compat.watch_graph_breaks(trial.breaks.append)
            trial.run_script()
        elif spec.mode == "model":
            from reprokit.models.trial import run_model_trial

            trial.compiled = True
            os.chdir(spec.cwd or os.getcwd())
            run_model_trial(spec.model, trial_dir)
        elif spec.mode == "repro":
            from reprokit.fx.materialize import repro_parts

            write_json_atomic(os.path.join(trial_dir, "repro_parts.json"),
                              repro_parts(spec.case, spec.edit, trial_dir))
        else:
            trial.run_graph()
        if trial.accuracy_failure:
            raise AccuracyFailure(trial.accuracy_failure)
        result = {"kind": "pass", "signature": sig.PASS.to_dict()}
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if trial.accuracy_failure:
            result = classify_exception(trial, AccuracyFailure(trial.accuracy_failure))
        elif code == 0:
            result = {"kind": "pass", "signature": sig.PASS.to_dict()}
        else:
            if not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
            result = {"kind": "exit", "signature": sig.for_exit(code).to_dict()}
        exit_code = 1 if code else 0
    except BaseException as e:  # the user's exception, whatever it is, is the data
        traceback.print_exc()
        result = classify_exception(trial, e)
        result["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-20000:]
        exit_code = 1
    result.update(trial.state())
    if trial.observe:
        try:
            write_json_atomic(os.path.join(trial_dir, "observed.json"), trial.observations())
        except Exception as e:  # the verdict still stands without the observations
            result["note"] = (result.get("note") or "") + f" (observations unavailable: {type(e).__name__}: {e})"
    if spec.mode == "script":
        result["local_modules"] = local_modules(spec.script)
    result["seconds"] = time.monotonic() - started
    result["import_seconds"] = import_seconds
    try:
        import torch

        result["cuda"] = bool(torch.cuda.is_available())
    except Exception:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    write_json_atomic(os.path.join(trial_dir, "result.json"), result)
    return exit_code


if __name__ == "__main__":
    code = main(sys.argv)
    # Skip interpreter teardown: user threads or a wedged compile worker must not turn a verdict into a hang.
    os._exit(code)
