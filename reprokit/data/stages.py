"""Data: the compiler stages in ladder order, and the config flips tried inside a failing stage."""
from __future__ import annotations

# Each stage adds one layer of the torch.compile stack to the one before.
STAGES = ("none", "eager", "aot_eager", "aot_eager_decomp_partition", "inductor")

STAGE_TITLES = {
    "none": "eager (no compile)",
    "eager": "dynamo (backend=eager)",
    "aot_eager": "aot_eager",
    "aot_eager_decomp_partition": "aot_eager_decomp_partition",
    "inductor": "inductor",
    "user": "user backend",
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

# Flags that only matter on a GPU; flipping them on a CPU-only run asks a question that cannot matter.
GPU_ONLY_FLAGS = {"triton.cudagraphs", "max_autotune"}

# Counted subsystems of torch's compiler_bisector worth bisecting, per stage, in the order tried.
SUBSYSTEMS = {
    "aot_eager_decomp_partition": ("decomposition",),
    "inductor": ("pre_grad_passes", "joint_graph_passes", "post_grad_passes", "cudagraphs", "lowerings"),
}

# Where stages before inductor have their own toggles in torch.
STAGE_CONFIG_FLIPS = {
    "aot_eager_decomp_partition": ({"name": "cse", "value": False},)  # functorch config,
}
