"""The backend a graph is compiled with under a stage: one choice (reprokit.data.stages.compile_choice) made
callable, for the router of script trials and for graph trials alike."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from reprokit.data.stages import COMPILING_STAGES, compile_choice


def backend_for(
    stage: str,
    compile_args: dict | None,
    patches: dict | None,
    user_backend: Any = None,
    on_piece: Callable | None = None,
) -> Callable:
    """A Dynamo backend, backend(gm, example_inputs) -> callable, for `stage` given the user's torch.compile
    arguments (compile_args: backend name, mode, options, dynamic) and the trial's config patches. user_backend:
    the object the user passed as backend=, used under stage "user" when it is not a registered name. on_piece:
    called (gm, error or None) for each graph inductor compiles inside a user backend other than inductor (one
    that hands pieces of its graph to inductor), so the failing piece can be named."""
    from reprokit import compat

    if stage not in COMPILING_STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    if stage == "eager":
        return _graph_forward  # Dynamo's graph, run as it is: no backend at all
    choice = compile_choice(stage, compile_args, patches)
    if choice["backend"] == "inductor":
        return compat.inductor_backend(
            choice["mode"], {**(choice["options"] or {}), **choice["patches"]}, choice["dynamic"]
        )
    if stage == "user" and user_backend is not None and not isinstance(user_backend, str):
        backend = user_backend
    else:
        backend = compat.lookup_backend(choice["backend"])
    return watching_inductor_compiles(backend, on_piece) if stage == "user" and on_piece else backend


def watching_inductor_compiles(backend: Callable, on_compile: Callable) -> Callable:
    """backend, reporting each graph inductor compiles while it or what it returned runs (a backend that hands
    pieces of its graph to inductor, at once or on first call): on_compile(gm, None) before, (gm, error) on raise."""
    from reprokit import compat

    def watched(inner):
        def compile_piece(gm, example_inputs, **kw):
            on_compile(gm, None)
            try:
                return inner(gm, example_inputs, **kw)
            except BaseException as e:
                on_compile(gm, e)
                raise

        return compile_piece

    def watching(fn, *args, **kwargs):
        with compat.inner_compile_wrapped(watched):
            return fn(*args, **kwargs)

    return lambda gm, inputs: functools.partial(watching, watching(backend, gm, inputs))


def inductor_observing(
    compile_args: dict | None, patches: dict | None, on_graph: Callable[[Any, list, bool], None]
) -> Callable:
    """Inductor as backend_for("inductor", ...) builds it, calling on_graph(aten_gm, inputs, is_backward) for
    every graph AOT autograd hands inductor (capturing a backward graph)."""
    from reprokit import compat

    choice = compile_choice("inductor", compile_args, patches)
    return compat.inductor_backend_observing(
        choice["mode"], {**(choice["options"] or {}), **choice["patches"]}, choice["dynamic"], on_graph
    )


def _graph_forward(gm, example_inputs):
    return gm.forward


def backend_name(backend: Any) -> str:
    """A readable name for whatever the user passed as `backend=`."""
    if isinstance(backend, str):
        return backend
    inner = getattr(backend, "compiler_name", None) or getattr(backend, "__name__", None)
    return inner or type(backend).__name__
