"""Render reprokit's jinja2 templates (repro.py, ISSUE.md, the tarball's README.md)."""

from __future__ import annotations

import json
import os
import re

import jinja2

from reprokit import __version__
from reprokit.data.stages import STAGE_TITLES, compile_choice
from reprokit.report.portable import portable_command
from reprokit.report.repro_inputs import input_parts


def template_dir() -> str:
    """templates/ as installed (the wheel maps it to reprokit.templates) or beside the package in a checkout."""
    beside = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "templates")
    if os.path.isfile(os.path.join(beside, "repro.py.j2")):
        return beside
    import importlib.resources

    return str(importlib.resources.files("reprokit.templates"))


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["basename"] = lambda p: os.path.basename(p or "")
    return env


def context_parts(ctx: dict | None) -> tuple[list, str | None]:
    """(statements run first, with-items around the run) that replay a graph's captured call-time context."""
    if not ctx:
        return [], None
    setup = []
    if ctx.get("default_dtype", "float32") != "float32":
        setup.append(f"torch.set_default_dtype(torch.{ctx['default_dtype']})")
    if ctx.get("deterministic"):
        setup.append("torch.use_deterministic_algorithms(True)")
    items = [
        f"torch.autocast({device!r}, dtype=torch.{dtype})"
        for device, dtype in sorted((ctx.get("autocast") or {}).items())
    ]
    if not ctx.get("grad_enabled", True):
        items.append("torch.no_grad()")
    return setup, ", ".join(items) or None


def said_once(prelude: str | None, hook_lines: list) -> tuple:
    """The script's prelude without the `import torch` repro.py opens with, and the hook assignments the prelude
    (copied from the script) does not already make."""
    if not prelude:
        return prelude, hook_lines
    kept = [line for line in prelude.splitlines() if line.strip() != "import torch"]
    return "\n".join(kept).strip("\n") or None, [h for h in hook_lines if h not in kept]


# Inductor draws its own random numbers unless told to fall back to eager's ops: only then do eager and compiled,
# started from one random state, draw the same ones (issue 46).
FALLBACK_RANDOM = "fallback_random = True"


def same_random_numbers(config_lines: list) -> list:
    """The config lines of a repro comparing random ops: inductor's fallback_random on, unless the script set it."""
    if any("fallback_random" in line for line in config_lines):
        return config_lines
    return [*config_lines, f"torch._inductor.config.{FALLBACK_RANDOM}  # compiled random ops draw what eager draws"]


def render_repro(
    parts: dict,
    verdict,
    *,
    stage: str,
    target,
    accuracy: bool,
    backward: bool,
    use_saved: bool,
    command: str,
    original_nodes: int,
    strict: bool = False,
    inline: bool = False,
    hang: dict | None = None,
) -> str:
    """repro.py's text. accuracy: compare compiled with eager and a float64 reference (strict: with the strict
    rule, for when the script's own tolerance is unknown); backward: run the backward too. Inputs: synthetic,
    or the real values inline (inline) or from repro_inputs.pt (use_saved). hang: {"limit": seconds, "doing":
    "compiling" or "running"}, a watchdog that reports the hang past the limit and exits 1."""
    choice = compile_choice(stage, parts.get("compile_args"))
    setup, with_items = context_parts(parts.get("context"))
    prelude, hook_lines = said_once(parts.get("prelude"), parts.get("hook_lines") or [])
    config_lines = list(parts["config_lines"])
    if accuracy and parts.get("random") and choice["backend"] == "inductor":
        config_lines = same_random_numbers(config_lines)
    text = (
        environment()
        .get_template("repro.py.j2")
        .render(
            reprokit_version=__version__,
            torch_version=parts["torch_version"],
            command=portable_command(command),
            stage_title=STAGE_TITLES.get(stage, stage),
            expected=target.said(),
            original_nodes=original_nodes,
            config_lines=config_lines,
            use_saved=use_saved,
            backend=choice["backend"],
            inline=bool(inline and parts.get("inline")),
            mode=choice["mode"],
            options=json.dumps(choice["options"]) if choice["options"] else None,
            accuracy=accuracy,
            strict=strict,
            backward=backward,
            prelude=prelude,
            hook_lines=hook_lines,
            context_setup=setup,
            context_with=with_items,
            hang=hang,
            **graph_parts(parts, verdict),
            **input_parts(parts, inline=bool(inline and parts.get("inline")), backward=backward),
        )
    )
    # The optional parts leave runs of blank lines: two at most, as PEP 8 puts between top-level definitions.
    return re.sub(r"\n{4,}", "\n\n\n", text).rstrip("\n") + "\n"


def graph_parts(parts: dict, verdict) -> dict:
    """The template's values of the graph itself: its code, its nodes, what it needs and how it was seen to fail."""
    return {
        "nodes": parts["nodes"],
        "graph": verdict.graph,
        "imports": parts["imports"],
        "attributes": parts["attributes"],
        "forward": parts["forward"],
        "submodules": parts.get("submodules", []),
        "children": parts.get("children", []),
        "graph_kind": parts.get("graph_kind", "forward"),
        "dynamic": bool(parts.get("dynamic")),
        "float64_error": parts.get("float64_error"),
        "random": bool(parts.get("random")),
        "launch_blocking": bool((getattr(verdict, "cuda_fault", None) or {}).get("launch_blocking")),
    }
