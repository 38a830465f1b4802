"""The only module that touches private torch APIs (torch._dynamo, torch._inductor, torch._functorch): a torch
upgrade that moves one is a change to this file alone. Imported only in trial children, never by the parent.
Each function reaches its private name and does little more: what is done with the answer (parsing, loops,
records) lives with the caller, so that this file stays one a reader checks against a new torch in one sitting."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import torch

from reprokit import settings

TORCH_ROOT = os.path.dirname(os.path.abspath(torch.__file__))
TORCH_VERSION = torch.__version__


def lookup_backend(name: str) -> Callable:
    """A registered Dynamo backend by name ("eager", "aot_eager", ...)."""
    import torch._dynamo

    return torch._dynamo.lookup_backend(name)


def inductor_backend(mode: str | None, options: dict | None, dynamic: bool | None) -> Callable:
    """Inductor as torch.compile would build it for these arguments (mode and options both honoured)."""
    return torch._TorchCompileInductorWrapper(mode, options or {}, dynamic)


def compile_wrapper() -> Callable | None:
    """What torch.compile builds its backend object with for any backend but inductor (it checks the arguments as
    it builds), called as (backend, mode, options, dynamic); None where this torch has none."""
    return getattr(torch, "_TorchCompileWrapper", None)


def inductor_backend_observing(
    mode: str | None, options: dict | None, dynamic: bool | None, on_graph: Callable[[Any, list, bool], None]
) -> Callable:
    """Inductor as torch.compile builds it, calling on_graph(aten_gm, example_inputs, is_backward) for every
    graph AOT autograd hands to inductor's inner compiler (forward, backward, inference)."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    wrapper = torch._TorchCompileInductorWrapper(mode, options or {}, dynamic)

    def inner(gm, example_inputs, **kwargs):
        on_graph(gm, example_inputs, bool(kwargs.get("is_backward")))
        return compile_fx_inner(gm, example_inputs, **kwargs)

    def backend(gm, example_inputs):
        return compile_fx(gm, example_inputs, inner_compile=inner, config_patches=dict(wrapper.config))

    return backend


def is_higher_order_op(target) -> bool:
    """Whether an FX node's target is a higher-order operator (cond, autograd.Function bodies, ...)."""
    return isinstance(target, torch._ops.HigherOrderOperator)


def op_qualname(fn) -> str:
    """The dotted name an FX target can be found again by: torch.ops.ns.op.overload for operators."""
    if isinstance(fn, torch._ops.OpOverload):
        return f"torch.ops.{fn.namespace}.{fn._opname}.{fn._overloadname}"
    if isinstance(fn, torch._ops.OpOverloadPacket):
        return f"torch.ops.{fn._qualified_op_name.replace('::', '.')}"
    if isinstance(fn, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{fn.name()}"
    from torch.fx.node import _get_qualified_name

    return _get_qualified_name(fn)


def is_fake(t) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)


def fake_tensor_mode():
    """A fake-tensor mode (no data) that turns the real tensors it meets into fakes."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


def config_modules() -> list[types.ModuleType]:
    """torch's compiler config modules, dynamo's, inductor's and functorch's in that order (each a module whose
    __name__ is the dotted name its entries are set by)."""
    import torch._dynamo.config as dcfg
    import torch._functorch.config as fcfg
    import torch._inductor.config as icfg

    return [dcfg, icfg, fcfg]


def inductor_config() -> types.ModuleType:
    """torch._inductor.config, the module."""
    import torch._inductor.config as icfg

    return icfg


def config_defaults_in(module) -> dict:
    """{dotted name: default} of every entry of one of torch's config modules (its private table of entries)."""
    return {name: getattr(entry, "default", None) for name, entry in getattr(module, "_config", {}).items()}


def set_functorch_config(name: str, value) -> None:
    setattr(__import__("torch._functorch.config", fromlist=["config"]), name, value)


def same(ref, res, fp64_ref=None, tol: float = 1e-3) -> bool:
    """torch._dynamo's own accuracy comparison, as its accuracy minifier uses it."""
    from torch._dynamo.utils import same as _same

    return bool(_same(ref, res, fp64_ref=fp64_ref, tol=tol, equal_nan=True))


@contextlib.contextmanager
def same_quietly():
    """`same` logging nothing: torch._dynamo.utils logs each failed comparison at error level, a line in the user's
    own job (capture --check-accuracy) that reprokit would have written."""
    import logging

    logger = logging.getLogger("torch._dynamo.utils")
    old, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = old


def cast_to_fp64(model, inputs):
    """Model and inputs in float64 for an honest reference (as torch's accuracy minifier does)."""
    from torch._dynamo.debug_utils import cast_to_fp64

    return cast_to_fp64(model, inputs)


def probe_bisect_counters(on_call: Callable[[str, str, Callable[[], str] | None], bool]) -> None:
    """Observe every CompilerBisector.disable_subsystem call: (backend, subsystem, debug_info), one a subsystem
    application. When on_call answers True that application is turned off, whatever TORCH_BISECT_* say (several
    subsystems at once, which torch's single TORCH_BISECT_SUBSYSTEM cannot say)."""
    from torch._inductor.compiler_bisector import CompilerBisector

    original = CompilerBisector.disable_subsystem.__func__  # type: ignore[attr-defined]  # a classmethod's function

    def disable_subsystem(cls, backend, subsystem, debug_info=None):
        if on_call(backend, subsystem, debug_info):
            return True
        return original(cls, backend, subsystem, debug_info)

    # Patching torch is how reprokit watches it: each such line names the mypy checks it sets aside.
    CompilerBisector.disable_subsystem = classmethod(disable_subsystem)  # type: ignore[method-assign, assignment]


def compile_keeping_backend(original_compile, *args, **kwargs):
    """torch.compile(...) keeping our backend under TORCH_BISECT_BACKEND, which recent torch obeys by swapping it:
    the counters we drive by that variable must still count, but the router must stay the backend."""
    try:
        from torch._inductor.compiler_bisector import CompilerBisector
    except ImportError:
        return original_compile(*args, **kwargs)
    saved = CompilerBisector.__dict__["get_backend"]
    CompilerBisector.get_backend = classmethod(lambda cls: None)  # type: ignore[method-assign, assignment]
    try:
        return original_compile(*args, **kwargs)
    finally:
        CompilerBisector.get_backend = saved  # type: ignore[method-assign]  # torch's own, put back


def watch_graph_breaks(on_break: Callable[[BaseException | None, str, list, types.CodeType], None]) -> bool:
    """Call on_break(exception, reason, stack, code) for every graph break Dynamo logs: the exception Dynamo raised
    (not its log text), the user's frames (traceback.FrameSummary) and the code of the frame it broke; False where
    this torch has no such hook."""
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslatorBase
        from torch._guards import TracingContext
    except ImportError:
        return False
    original = getattr(InstructionTranslatorBase, "log_graph_break", None)
    if original is None or getattr(original, "_reprokit", False):
        return original is not None

    def log_graph_break(self, *args, **kwargs):
        try:
            exc = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, BaseException)), None)
            reason = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, str)), "")
            if exc is None or not getattr(exc, "logged", False):
                stack = getattr(exc, "real_stack", None) or TracingContext.extract_stack()
                on_break(exc, reason, stack, self.f_code)
        except Exception:  # observing must never change what Dynamo does
            pass
        return original(self, *args, **kwargs)

    log_graph_break._reprokit = True  # type: ignore[attr-defined]  # marks it ours: never wrapped twice
    InstructionTranslatorBase.log_graph_break = log_graph_break  # type: ignore[method-assign]  # watched
    return True


def compilation_metrics() -> list | None:
    """Dynamo's CompilationMetrics records, one per frame it compiled; None where this torch keeps none."""
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return None
    return list(get_compilation_metrics())


def dynamo_counters() -> dict:
    """Dynamo's counters (frames, graph_break, unimplemented, stats) as plain nested dicts."""
    from torch._dynamo.utils import counters

    return {k: dict(v) for k, v in counters.items()}


def recompile_limit() -> int:
    import torch._dynamo.config as dcfg

    return int(getattr(dcfg, "recompile_limit", None) or getattr(dcfg, "cache_size_limit", None) or 8)


def frames_compiled() -> int:
    """How many frames Dynamo has started compiling so far in this process."""
    from torch._dynamo.utils import counters

    return int(counters["frames"].get("total", 0))


def import_compiler(cpu: bool = False) -> None:
    """Once, in the warm worker: import Dynamo and inductor, hash triton's sources for cache keys (files only, no CUDA
    call: 0.4 s of a 2.1 s trial on 2.15); with cpu, register the joint-graph patterns a CPU graph's compile would."""
    import torch._inductor.compile_fx  # noqa: F401 (Dynamo with it)

    with contextlib.suppress(Exception), torch.random.fork_rng(devices=[]):
        getattr(torch._inductor.codecache, "triton_key", lambda: None)()
        if cpu:  # positional, as joint_graph_passes calls it: the one cache entry a CPU graph's compile looks up
            from torch._inductor.fx_passes.joint_graph import lazy_init

            lazy_init(torch.device("cpu"))


def cpu_vec_isa_candidates() -> list:
    """The CPU vector ISAs inductor may use here that this CPU has (x86 only): bool(isa) test-builds one (g++) and
    loads it, the answer cached on the ISA object for valid_vec_isas()."""
    import platform

    import torch.utils._filelock  # noqa: F401 (imported here, so that the builds' threads import nothing)
    from torch._inductor import codecache, cpp_builder, cpu_vec_isa  # noqa: F401

    have = cpu_vec_isa.x86_isa_checker() if platform.machine() in ("x86_64", "AMD64") else []
    return [i for i in cpu_vec_isa.supported_vec_isa_list if have and set(str(i).split()) <= set(have)]


def valid_vec_isas() -> list:
    """The CPU vector ISAs that build and load here, as inductor's C++ backend asks (each ISA asked once)."""
    from torch._inductor import cpu_vec_isa

    return cpu_vec_isa.valid_vec_isa_list()


def fork_poisoned_for_cuda() -> bool:
    """In a forked child: whether torch considers CUDA unusable here because the parent touched the driver."""
    return bool(getattr(torch._C, "_cuda_isInBadFork", lambda: False)())


# Functions torch caches (functools.cache / lru_cache) that read the environment: a fork of the warm worker
# must not answer from the worker's environment. (module, function) as of torch 2.13; absent ones are skipped.
_CACHED_ENV_READS = (
    ("torch._inductor.compiler_bisector", "get_env_val"),  # TORCH_BISECT_BACKEND / _SUBSYSTEM / _MAX
    *(("torch._inductor.runtime.caching.config", n) for n in ("_env_var_val", "_env_var_config", "_versioned_config")),
    *(
        ("torch._inductor.select_algorithm", n)
        for n in ("get_mm_log_filename", "get_flex_attention_log_filename", "get_conv_log_filename", "get_num_workers")
    ),
    ("torch._dynamo.utils", "_is_tensorify_enabled"),
)


def clear_cached_env_reads() -> list[str]:
    """Forget what torch's cached environment readers answered (modules already imported); the names cleared."""
    cleared = []
    for module, name in _CACHED_ENV_READS:
        fn = getattr(sys.modules.get(module), name, None)
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()
            cleared.append(f"{module}.{name}")
    return cleared


def reread_env_switches() -> None:
    """In a forked warm trial: re-read the switches torch took from the environment at import (CompilerBisector's
    TORCH_BISECT_*, through get_env_val's cache; logging's TORCH_LOGS and TORCH_TRACE; TORCHDYNAMO_DISABLE needs none)."""
    clear_cached_env_reads()
    from torch._inductor import compiler_bisector

    if settings.TORCH_LOGS.get() or settings.TORCH_TRACE.get():
        from torch._logging import _internal as logging_internal

        logging_internal.LOG_TRACE_HANDLER = None  # made once, with the worker's (empty) TORCH_TRACE
        logging_internal._init_logs()
    again = getattr(compiler_bisector, "get_is_bisection_enabled", None)
    compiler_bisector.CompilerBisector.bisection_enabled = bool(
        again() if again else (settings.TORCH_BISECT_SUBSYSTEM.get() or settings.TORCH_BISECT_BACKEND.get())
    )


def wrap_dynamo_optimize(wrap: Callable[[Callable], Callable]) -> bool:
    """torch._dynamo.optimize = wrap(torch._dynamo.optimize), for scripts that call it instead of torch.compile;
    False where this torch has none."""
    import torch._dynamo

    original = getattr(torch._dynamo, "optimize", None)
    if original is not None:
        torch._dynamo.optimize = wrap(original)
    return original is not None


@contextlib.contextmanager
def inner_compile_wrapped(wrap: Callable[[Callable], Callable]):
    """Within: inductor's inner compile of each graph, compile_fx._compile_fx_inner(gm, example_inputs, **kw),
    replaced by wrap(it); read when called, however a backend reached inductor, and put back on leaving."""
    import torch._inductor.compile_fx as cfx

    inner = cfx._compile_fx_inner
    cfx._compile_fx_inner = wrap(inner)  # watched, put back below
    try:
        yield
    finally:
        cfx._compile_fx_inner = inner


def wrap_cpp_compile(wrap: Callable[[Callable, Callable], Callable]) -> bool:
    """inductor's compiler run, cpp_builder.run_compile_cmd(cmd_line, cwd) = wrap(it, fail): fail(output) makes this
    thread's next run of it fail with that output, so inductor raises its own error from its own frame (the
    failure's identity). Looked up when CppBuilder.build runs; False where this torch has none."""
    from torch._inductor import cpp_builder

    original, real, failing = getattr(cpp_builder, "run_compile_cmd", None), cpp_builder.subprocess, threading.local()

    def run(cmd, *args, **kwargs):
        output, failing.output = getattr(failing, "output", None), None
        if output is None:
            return real.run(cmd, *args, **kwargs)
        raise real.CalledProcessError(1, cmd, output=output.encode())

    if original is not None:
        cpp_builder.subprocess = types.SimpleNamespace(**{**vars(real), "run": run})  # type: ignore[assignment]
        cpp_builder.run_compile_cmd = wrap(original, lambda output: setattr(failing, "output", output))
    return original is not None


def aoti_entry_module():
    """torch._inductor: the module holding aoti_compile_and_package, aot_compile and aoti_load_package."""
    import torch._inductor

    return torch._inductor


def draft_export_report(program):
    """draft_export's report (its failures, their frames) on the program it returned; None if it has none."""
    return getattr(program, "_report", None)
