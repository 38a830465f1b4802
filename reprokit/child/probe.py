"""torch's compiler-bisector counters: count every subsystem application, and turn chosen ones off."""

from __future__ import annotations

from reprokit.child.state import TrialState


def install_probe(state: TrialState) -> None:
    """Count (backend, subsystem) applications into state.counters; turn off those the spec names, and describe
    the application the spec points at (state.bisect_detail)."""
    from reprokit import compat

    target = state.spec.subsystem
    seen: dict = {}  # applications so far, by (backend, subsystem)

    def on_call(backend, subsystem, debug_info):
        key = (backend, subsystem)
        nth = seen.get(key, 0)
        seen[key] = nth + 1
        state.counters[key] = max(state.counters.get(key, 0), nth + 1)
        if subsystem == "lowerings" and nth == len(state.lowering_ops):
            # Which op each application lowers: the bisect's first guesses at the breaking one.
            state.lowering_ops.append(_node_target(debug_info))
        if not target or backend != target["backend"]:
            return False
        if subsystem == target.get("name") and nth == target["max"]:
            state.bisect_detail = describe_debug_info(debug_info)
            state.save_state()  # at once: a pass that never ends (a hang) is killed before the state is saved again
        return subsystem in target.get("names", ())

    compat.probe_bisect_counters(on_call)


def describe_debug_info(debug_info) -> str | None:
    """What a subsystem application was: for lowerings, the FX node behind torch's repr(n) callback."""
    if debug_info is None:
        return None
    try:
        node = _node_of(debug_info)
        if node is not None:
            return f"{node.target} ({node.format_node()})"
        return str(debug_info())
    except Exception as e:  # the description is a nicety; never let it fail a trial
        return f"<unavailable: {type(e).__name__}>"


def _node_of(debug_info):
    """The FX node a lowering application's debug callback closes over, or None."""
    import torch.fx

    for cell in getattr(debug_info, "__closure__", None) or ():
        if isinstance(cell.cell_contents, torch.fx.Node):
            return cell.cell_contents
    return None


def _node_target(debug_info) -> str | None:
    try:
        node = _node_of(debug_info) if debug_info is not None else None
        return str(node.target) if node is not None else None
    except Exception:  # a nicety, as above
        return None
