"""Data: the compiler stages in ladder order, and the config flips tried inside a failing stage."""

from __future__ import annotations

# Each stage adds one layer of the torch.compile stack to the one before.
# aot_eager_decomp_partition_crossref runs the same graphs as the stage before it, checking each custom operator's
# fake (meta) kernel against its real kernel at run time: a failure first seen there is a wrong fake kernel.
CROSSREF = "aot_eager_decomp_partition_crossref"
# The stages whose failure a flipped inductor or functorch setting may avoid (bisect/configs.py).
CONFIG_STAGES = ("inductor", "aot_eager_decomp_partition")
STAGES = ("none", "eager", "aot_eager", "aot_eager_decomp_partition", CROSSREF, "inductor")

STAGE_TITLES = {
    "none": "eager (no compile)",
    "eager": "dynamo (backend=eager)",
    "aot_eager": "aot_eager",
    "aot_eager_decomp_partition": "aot_eager_decomp_partition",
    CROSSREF: "crossref (fake kernels)",
    "inductor": "inductor",
    "user": "user backend",
    # the export ladder (reprokit.export): torch.export, its decompositions, AOTInductor
    "export": "torch.export (ep.module())",
    "decompose": "run_decompositions",
    "aoti": "AOTInductor",
}

# Inductor config entries that are known to flip behaviour. The flip tried is "not the value in
# force", read from the failing trial, so a script that sets one itself is flipped back.
# The first four are those of torch's compiler_bisector.
INDUCTOR_FLAGS = (
    "fallback_random",
    "emulate_precision_casts",
    "layout_optimization",
    "comprehensive_padding",
    "pattern_matcher",
    "epilogue_fusion",
    "freezing",
    "max_autotune",
    "cpp_wrapper",
    "size_asserts",
    "triton.cudagraphs",
)

# Inductor's numerics modes (bisect/numerics.py): `numerics` (TORCHINDUCTOR_NUMERICS, torch 2.15 on) and the
# fallback to ATen for every op (`fallback_by_default`, inductor lite mode's). A torch without one lacks the entry.
NUMERICS_CONFIG = ("numerics", "fallback_by_default")
STRICT_NUMERICS = ("strict_pointwise", "strict_reduction", "strict")  # weakest first: strict is both of the others

# Flags that only matter on a GPU; flipping them on a CPU-only run asks a question that cannot matter.
GPU_ONLY_FLAGS = {"triton.cudagraphs", "max_autotune"}

# Set by reprokit's own trial environment (trial.environment.trial_env), not by the user: never copied into a repro,
# never flipped as the user's setting.
INDUCED_BY_REPROKIT = {"torch._inductor.config.fx_graph_cache", "torch._functorch.config.enable_autograd_cache"}

# Counted subsystems of torch's compiler_bisector worth bisecting, per stage, in the order tried.
SUBSYSTEMS = {
    "aot_eager_decomp_partition": ("decomposition",),
    "inductor": ("pre_grad_passes", "joint_graph_passes", "post_grad_passes", "cudagraphs", "lowerings"),
}

# Where stages before inductor have their own toggles in torch.
STAGE_CONFIG_FLIPS = {
    "aot_eager_decomp_partition": ({"name": "cse", "value": False},)  # functorch config,
}

# Stages a graph can be compiled with ("none" compiles nothing: Dynamo is off).
COMPILING_STAGES = ("eager", "aot_eager", "aot_eager_decomp_partition", CROSSREF, "inductor", "user")


def compile_choice(stage: str, compile_args: dict | None, patches: dict | None = None) -> dict:
    """How a graph is compiled under `stage`, given the user's torch.compile arguments: the one decision that
    trials (script and graph) and repro.py share. Returns {"backend": name, "mode", "options" (the user's, when
    kept), "patches" (config flips of the trial), "dynamic", "keep_user"}. The user's mode and options are
    inductor's arguments: they go with the graph only when both the stage and the user chose inductor."""
    args = compile_args or {}
    user = args.get("backend") or "inductor"
    backend = user if stage == "user" else stage
    keep_user = backend == "inductor" and user == "inductor"
    options = args.get("options") if keep_user and isinstance(args.get("options"), dict) else None
    return {
        "backend": backend,
        "mode": args.get("mode") if keep_user else None,
        "options": options,
        "patches": dict(patches or {}),
        "dynamic": args.get("dynamic"),
        "keep_user": keep_user,
    }


def context_differs(ctx) -> bool:
    """Whether a captured call-time context (child.context.capture) differs from a fresh interpreter's."""
    return bool(ctx) and (
        not ctx.get("grad_enabled", True)
        or ctx.get("default_dtype", "float32") != "float32"
        or bool(ctx.get("deterministic"))
        or bool(ctx.get("autocast"))
    )
