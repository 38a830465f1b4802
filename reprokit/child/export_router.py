"""Stand-ins for torch.export's and AOTInductor's entry points in a script trial: the export ladder.

The trial's stage says how far the deployment path runs for real; past that point each artefact is replaced by
what the step before produced, so the script's own calls (second calls, other inputs) are replayed on it:
  none and Dynamo's stages: nothing real, every artefact is the eager module (the no-compile baseline)
  export:    torch.export.export real, ep.module() runs; decompositions skipped, AOTI runs ep.module()
  decompose: as export, with run_decompositions real
  user:      everything real (the original; the aoti stage and its config and subsystem trials)
Every entry point notes its phase before it runs and clears it after, so a failure is placed:
export, export_run, decompose, aoti_compile or aoti_run.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from reprokit.child import caught
from reprokit.child.state import TrialState

# How many of (export, decompose, aoti) run for real under each trial stage.
LEVELS = {"export": 1, "decompose": 2, "user": 3}


class EagerProgram:
    """What torch.export.export returns in the no-compile baseline: the eager module behind the program's API."""

    def __init__(self, module):
        self._module = module

    def module(self, *args, **kwargs):
        return self._module

    def run_decompositions(self, *args, **kwargs):
        return self

    def __call__(self, *args, **kwargs):
        return self._module(*args, **kwargs)


class Artefact:
    """A callable artefact of the deployment path (ep.module(), a loaded AOTI package): calls note the phase, and
    are compared with the eager module when the spec asks; everything else reaches the wrapped object."""

    def __init__(self, router: ExportRouter, fn, phase: str, eager):
        self._router, self._fn, self._phase, self._eager = router, fn, phase, eager

    def __call__(self, *args, **kwargs):
        return caught.calling(self._router.state, self._router.call, self._fn, self._phase, self._eager, args, kwargs)

    def __getattr__(self, name):
        return getattr(self._fn, name)


class ExportRouter:
    """The wrapped entry points of one trial and what each artefact came from."""

    def __init__(self, state: TrialState):
        self.state = state
        self.level = LEVELS.get(state.spec.stage, 0)
        self.origin: dict = {}  # id(program) -> the eager module it was exported from
        self.packages: dict = {}  # package path -> (stand-in callable, eager module)
        self.saved: dict = {}  # torch.export.save path -> program

    def note(self, phase: str | None, entry: str | None = None) -> None:
        """The phase now running (None: the last one finished); saved at once, a crash keeps it."""
        record: dict[str, Any] = self.state.export or {"entries": [], "phase": None, "level": self.level}
        if entry and entry not in record["entries"]:
            record["entries"].append(entry)
        record["phase"] = phase
        if phase:
            record["last_phase"] = phase
        self.state.export = record
        self.state.compiled = True  # a deployment-path script is bisected, not turned away
        self.state.save_state()

    def export(self, original, mod, args=(), kwargs=None, *rest, **kw):
        self.note("export", "torch.export.export")
        if self.level < 1:
            program = EagerProgram(mod)
        else:
            try:
                program = original(mod, args, kwargs, *rest, **kw)
            except Exception:
                self.draft(mod, args, kwargs, kw)
                raise
            self.note(None)
            self.record_site(program)
        self.origin[id(program)] = mod
        return program

    def draft(self, mod, args, kwargs, options: dict) -> None:
        """export() raised: when the spec asks (the ladder's export trial), draft_export's report of it."""
        if self.state.spec.save_graph != 0:
            return
        from reprokit.child.export_draft import run_draft_export

        self.state.note = (
            run_draft_export(mod, args, kwargs, options, self.state.spec.script, self.state.dir) or self.state.note
        )
        self.note("export")

    def record_site(self, program) -> None:
        """The exported program's graph size, for the verdict."""
        try:
            nodes = sum(1 for n in program.graph.nodes if n.op == "call_function")
            assert self.state.export is not None  # note("export") made it
            self.state.export["nodes"] = nodes
        except Exception:  # a nicety only
            pass

    def module_of(self, program, original_module):
        """ep.module(): run for real from the export stage on, compared with eager when asked."""
        eager = self.origin.get(id(program))
        if isinstance(program, EagerProgram):
            return program.module()
        return Artefact(self, original_module(program), "export_run", eager)

    def decompose(self, original, program, *args, **kwargs):
        self.note("decompose", "ExportedProgram.run_decompositions")
        if self.level < 2 or isinstance(program, EagerProgram):
            self.note(None)
            return program
        out = original(program, *args, **kwargs)
        self.note(None)
        self.origin[id(out)] = self.origin.get(id(program))
        return out

    def aoti_package(self, original, program, *args, package_path=None, inductor_configs=None, **kwargs):
        self.note("aoti_compile", "aoti_compile_and_package")
        eager = self.origin.get(id(program))
        if self.level < 3:
            path = (
                os.fspath(package_path)
                if isinstance(package_path, (str, os.PathLike))
                else f"reprokit-stand-in-{len(self.packages)}.pt2"
            )
            self.packages[path] = (program if isinstance(program, EagerProgram) else program.module(), eager)
            self.note(None)
            return path
        configs = {**(inductor_configs or {}), **(self.state.spec.config or {})}
        self.state.record_configs(configs)
        if self.state.spec.save_graph == 0:  # the minifier's starting point: the program AOTInductor was given
            from reprokit.child.export_case import write_case

            self.state.note = write_case(program, self.state.dir) or self.state.note
            self.state.save_state()
        path = original(program, *args, package_path=package_path, inductor_configs=configs or None, **kwargs)
        self.note(None)
        self.packages[os.fspath(path) if isinstance(path, (str, os.PathLike)) else id(path)] = (None, eager)
        return path

    def aot_compile(self, original, gm, args=(), kwargs=None, *, options=None, **kw):
        self.note("aoti_compile", "aot_compile")
        eager = self.origin.get(id(gm), gm)
        if self.level < 3:
            path = f"reprokit-stand-in-{len(self.packages)}.so"
            self.packages[path] = (gm, eager)
            self.note(None)
            return path
        options = {**(options or {}), **(self.state.spec.config or {})}
        self.state.record_configs(options)
        out = original(gm, args, kwargs, options=options, **kw)
        self.note(None)
        if isinstance(out, str):
            self.packages[out] = (None, eager)
        return out

    def load_package(self, original, path, *args, **kwargs):
        key = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
        stand_in, eager = self.packages.get(key, (None, None))
        self.note("aoti_run", "aoti_load_package")
        if stand_in is not None:
            self.note(None)
            return stand_in if self.level == 0 else Artefact(self, stand_in, "export_run", eager)
        loaded = original(path, *args, **kwargs)
        self.note(None)
        return Artefact(self, loaded, "aoti_run", eager)

    def save(self, original, program, f, *args, **kwargs):
        self.note(None, "torch.export.save")
        if isinstance(f, (str, os.PathLike)):
            self.saved[os.fspath(f)] = program
        if not isinstance(program, EagerProgram):
            original(program, f, *args, **kwargs)

    def load(self, original, f, *args, **kwargs):
        self.note(None, "torch.export.load")
        key = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
        before = self.saved.get(key)
        if isinstance(before, EagerProgram):
            return before
        program = original(f, *args, **kwargs)
        if before is not None:
            self.origin[id(program)] = self.origin.get(id(before))
        return program

    def call(self, fn, phase: str, eager, args, kwargs):
        """One call of an artefact: the phase noted while it runs, then compared with eager when asked."""
        from reprokit.child.accuracy import AccuracyFailure, compare_outputs, copies

        reference = None
        if self.state.spec.check_accuracy and eager is not None and not kwargs:
            reference = (eager(*copies(args)), None)
        self.note(phase)
        try:
            out = fn(*args, **kwargs)
        except Exception as e:
            if phase == "aoti_run":
                raise_cuda_fault(e)
            raise
        self.note(None)
        mismatch = compare_outputs(reference, out) if reference is not None else None
        if mismatch:
            assert self.state.export is not None  # note() made it
            self.state.export["phase"] = self.state.export["last_phase"] = phase
            self.state.fail(0, accuracy=f"{phase}: {mismatch}")
            raise AccuracyFailure(self.state.accuracy_failure)
        return out


def raise_cuda_fault(error: Exception) -> None:
    """AOTInductor's package failed: when a CUDA fault is behind it (a launch that returned the device's error under
    CUDA_LAUNCH_BLOCKING=1), raise the device's own error, chained to the loader's, whose message names neither."""
    import torch

    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return
    try:
        torch.cuda.synchronize()  # a device-side assert or illegal access is sticky: every later call reports it
    except Exception as fault:
        raise fault from error


def install_export_router(state: TrialState) -> ExportRouter:
    """Wrap torch.export's and AOTInductor's entry points for the trial's stage."""
    import torch
    import torch.export

    from reprokit import compat

    router = ExportRouter(state)

    def wrap(owner, name: str, method: str):
        original = getattr(owner, name, None)
        if original is None:
            return
        handler = getattr(router, method)

        def entry(*args, **kwargs):
            if from_torch(sys._getframe(1)):  # torch calling its own entry points is not the script's step
                return original(*args, **kwargs)
            return caught.calling(state, handler, original, *args, **kwargs)

        entry.__name__ = name
        entry.__doc__ = getattr(original, "__doc__", None)
        setattr(owner, name, entry)

    wrap(torch.export, "export", "export")
    wrap(torch.export, "save", "save")
    wrap(torch.export, "load", "load")
    program_class = torch.export.ExportedProgram
    wrap(program_class, "run_decompositions", "decompose")
    original_module = program_class.module

    def module(self, *args, **kwargs):
        if from_torch(sys._getframe(1)):
            return original_module(self, *args, **kwargs)
        return router.module_of(self, lambda p: original_module(p, *args, **kwargs))

    program_class.module = module  # type: ignore[method-assign]  # watched where the user's script calls it
    aoti = compat.aoti_entry_module()
    for name, method in (
        ("aoti_compile_and_package", "aoti_package"),
        ("aot_compile", "aot_compile"),
        ("aoti_load_package", "load_package"),
    ):
        wrap(aoti, name, method)
    return router


def from_torch(frame) -> bool:
    """The caller is torch itself (or reprokit): its inner calls of the entry points pass through unchanged."""
    from reprokit import compat

    path = os.path.abspath(frame.f_code.co_filename)
    return path.startswith(compat.TORCH_ROOT + os.sep) or path.startswith(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    )
