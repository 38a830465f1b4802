"""The state a compiled graph ran under, captured when Dynamo hands it to the backend and replayed around a
graph trial: grad mode, autocast per device, default dtype, deterministic algorithms.

Dynamo guards on this state but does not put it in the graph: an outer `torch.autocast` region changes what
AOT autograd and inductor produce, so a graph replayed without it can pass where the script failed.
"""

from __future__ import annotations

import contextlib

_DEVICES = ("cpu", "cuda")


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def capture() -> dict:
    """The ambient state now, as plain data (JSON)."""
    import torch

    autocast = {}
    for device in _DEVICES:
        try:
            if torch.is_autocast_enabled(device):
                autocast[device] = _dtype_name(torch.get_autocast_dtype(device))
        except (RuntimeError, TypeError):  # a device type this build does not know
            continue
    return {
        "grad_enabled": torch.is_grad_enabled(),
        "default_dtype": _dtype_name(torch.get_default_dtype()),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "autocast": autocast,
    }


@contextlib.contextmanager
def replay(ctx: dict | None):
    """Run the body under the captured state; everything is restored afterwards."""
    import torch

    if not ctx:
        yield
        return
    old_dtype = torch.get_default_dtype()
    old_det = torch.are_deterministic_algorithms_enabled()
    with contextlib.ExitStack() as stack:
        torch.set_default_dtype(getattr(torch, ctx.get("default_dtype", "float32")))
        stack.callback(torch.set_default_dtype, old_dtype)
        torch.use_deterministic_algorithms(bool(ctx.get("deterministic")))
        stack.callback(torch.use_deterministic_algorithms, old_det)
        stack.enter_context(torch.set_grad_enabled(ctx.get("grad_enabled", True)))
        for device, dtype in (ctx.get("autocast") or {}).items():
            stack.enter_context(torch.autocast(device, dtype=getattr(torch, dtype)))
        yield
