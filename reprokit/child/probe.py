"""torch's compiler-bisector counters: count every subsystem application, and turn chosen ones off."""
from __future__ import annotations

from reprokit.child.state import TrialState


def install_probe(state: TrialState) -> None:
    """Count (backend, subsystem) applications into state.counters; turn off those the spec names, and describe
    the application the spec points at (state.bisect_detail)."""
    from reprokit import compat

    target = state.spec.subsystem

    def on_call(backend, subsystem, nth, debug_info):
        key = (backend, subsystem)
        state.counters[key] = max(state.counters.get(key, 0), nth + 1)
        if not target or backend != target["backend"]:
            return False
        if subsystem == target.get("name") and nth == target["max"]:
            state.bisect_detail = describe_debug_info(debug_info)
        return subsystem in target.get("names", ())

    compat.probe_bisect_counters(on_call)


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
