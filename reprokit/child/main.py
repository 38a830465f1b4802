"""Runs inside one trial process: applies the stage, runs the script or a captured graph, classifies.

Invoked as `python -m reprokit.child.main SPEC_JSON TRIAL_DIR` (or forked from the warm worker, which calls
main()). Writes TRIAL_DIR/result.json atomically; when the process dies by a signal or is killed on timeout the
parent classifies from the exit status, TRIAL_DIR/state.json (written as graphs are compiled) and
TRIAL_DIR/stacks.txt (faulthandler).
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import time
import traceback

from reprokit import settings
from reprokit.child.accuracy import AccuracyFailure
from reprokit.child.classify import classify_exception, classify_exit, passed
from reprokit.child.state import TrialState, peak_memory
from reprokit.data.kinds import TrialKind
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import private_opener, write_json_atomic
from reprokit.data.signature import Signature

# Importing torch is deliberately deferred until after faulthandler is armed: a hang in import is a hang too.


def main(argv: list[str]) -> int:
    """Run the trial SPEC_JSON describes into TRIAL_DIR; the process's exit code."""
    spec, trial_dir = read_spec(argv[1], argv[2])
    arm_faulthandler(trial_dir)
    state = TrialState(spec, trial_dir)
    state.spec_path = os.path.abspath(argv[1])
    observer = None
    if spec.observe:
        from reprokit.child.observe import Observer

        observer = Observer()
    per_rank_cache()
    started = time.monotonic()
    timing = {}
    exit_code = 0
    try:
        import torch  # noqa: F401

        timing["import_seconds"] = time.monotonic() - started
        dispatch(state, observer)
        if state.accuracy_failure:
            raise AccuracyFailure(state.accuracy_failure)
        result = passed()
    except SystemExit as e:
        result, exit_code = classify_exit(state, e)
    except BaseException as e:  # the user's exception, whatever it is, is the data
        traceback.print_exc()
        result = classify_exception(state, e)
        result["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-20000:]
        exit_code = 1
    save_recent_calls(state, result)
    write_result(state, observer, result, started, timing.get("import_seconds"))
    if state.ahead is not None:  # it did not crash: what was written ahead of one goes
        state.ahead.finish()
    return exit_code


def save_recent_calls(state: TrialState, result: dict) -> None:
    """A mismatch the script's own check found, where no graph raised: each graph as of its last call, for the
    bisect to check compiled against eager (capture/recent_call, as `reprokit capture` writes them)."""
    if state.recent is None or not Signature.from_dict(result["signature"]).reports_mismatch():
        return
    kept = state.recent.kept()
    missing = sorted(set(kept) - set(state.recent.write(state.dir, state.spec.script)))
    if missing:
        note = f"the latest call of graph{'s' * (len(missing) > 1)} {', '.join(map(str, missing))} not saved"
        state.note = "; ".join(x for x in (state.note, note) if x)


def per_rank_cache() -> None:
    """With REPROKIT_CACHE_PER_RANK=1 each rank of a launch gets an inductor cache folder of its own, under the one the
    trial was given (bisect/warm.py asks whether a failure needs the ranks to share one)."""
    folder = settings.TORCHINDUCTOR_CACHE_DIR.get()
    if settings.CACHE_PER_RANK.on() and folder:
        os.environ[settings.TORCHINDUCTOR_CACHE_DIR.name] = os.path.join(folder, f"rank{settings.RANK.get('0')}")


def read_spec(spec_path: str, trial_dir: str) -> tuple[TrialSpec, str]:
    """The spec, and the folder this process answers in: under torchrun, ranks other than 0 answer beside it."""
    with open(spec_path) as f:
        spec = TrialSpec.from_dict(json.load(f))
    rank = settings.RANK.get("0") if int(settings.WORLD_SIZE.get("1")) > 1 else "0"
    if rank != "0":
        trial_dir = os.path.join(trial_dir, f"rank{rank}")
        os.makedirs(trial_dir, exist_ok=True)
    return spec, trial_dir


def arm_faulthandler(trial_dir: str) -> None:
    """Fatal signals print every thread's stack to stderr; SIGUSR1 (the runner's timeout) dumps them to
    stacks.txt."""
    stacks = open(os.path.join(trial_dir, "stacks.txt"), "w", opener=private_opener)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)


def dispatch(state: TrialState, observer) -> None:
    """Set up the compiler for the spec and run what its mode names: a script, a model, a graph, repro parts."""
    from reprokit import compat
    from reprokit.child.comparisons import install as install_comparisons
    from reprokit.child.probe import install_probe

    spec = state.spec
    for name, value in (spec.config or {}).items():
        if name.startswith("functorch."):
            compat.set_functorch_config(name.split(".", 1)[1], value)  # global: aot reads it lazily
    install_probe(state)
    install_comparisons()  # a check that exits or raises after a failed comparison reports a mismatch
    if not spec.fresh_interpreter and spec.mode in (
        "script",
        "graph",
        "divergence",
    ):  # a verification compiles everything
        from reprokit.child import compile_errors

        compile_errors.install(state.replayed.append)
    if spec.mode == TrialKind.SCRIPT:
        from reprokit.child.ranks import mark_environment
        from reprokit.child.router import install_router
        from reprokit.child.script import run_script

        mark_environment(state.spec_path, state.dir)  # ranks the script spawns run under the stage too

        install_router(state, observer)
        from reprokit.child.export_router import install_export_router

        install_export_router(state)
        if observer:
            observer.watch_breaks()
        run_script(spec)
    elif spec.mode == TrialKind.MODEL:
        from reprokit.models.trial import run_model_trial

        state.compiled = True
        os.chdir(spec.cwd or os.getcwd())
        assert spec.model is not None  # a model trial names its model
        run_model_trial(spec.model, state.dir)
    elif spec.mode == TrialKind.REPRO:
        from reprokit.child.graph import run_prelude
        from reprokit.fx.materialize import repro_parts

        assert spec.case is not None  # a repro trial names its case folder
        run_prelude(spec.case)  # the graph may call ops the script registered

        write_json_atomic(os.path.join(state.dir, "repro_parts.json"), repro_parts(spec.case, spec.edit, state.dir))
    elif spec.mode == TrialKind.DIVERGENCE:
        from reprokit.child.divergence import run_divergence

        run_divergence(state)
    else:
        from reprokit.child.graph import run_graph

        run_graph(state)


def write_result(state: TrialState, observer, result: dict, started: float, import_seconds) -> None:
    """result.json: the verdict, the recorded state, observations (observed.json) and timings."""
    said = result.get("note")  # the classifier's line (e.g. the accuracy mismatch) and the state's note both stay
    result.update(state.state())
    if said and said not in (result.get("note") or ""):
        result["note"] = "; ".join(x for x in (said, result.get("note")) if x)
    if observer:
        try:
            write_json_atomic(os.path.join(state.dir, "observed.json"), observer.observations())
        except Exception as e:  # the verdict still stands without the observations
            result["note"] = (result.get("note") or "") + f" (observations unavailable: {type(e).__name__}: {e})"
    if state.spec.mode == TrialKind.SCRIPT:
        from reprokit.child.script import local_files_read, local_modules

        result["local_modules"] = local_modules(state.spec.script)
        result["local_files_read"] = local_files_read(state.spec.script)
    result["peak_memory"] = peak_memory()
    result["seconds"] = time.monotonic() - started
    result["import_seconds"] = import_seconds
    try:
        import torch

        result["cuda"] = bool(torch.cuda.is_available())
    except Exception:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    write_json_atomic(os.path.join(state.dir, "result.json"), result)


if __name__ == "__main__":
    code = main(sys.argv)
    # Skip interpreter teardown: user threads or a wedged compile worker must not turn a verdict into a hang.
    os._exit(code)
