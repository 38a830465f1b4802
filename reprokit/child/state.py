"""What one trial records as it goes: graphs compiled, torch's bisect counters, the failing graph, the config in
force. Written to TRIAL_DIR/state.json at every step (a crash or hang leaves it behind) and merged into
result.json at the end."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import write_json_atomic

if TYPE_CHECKING:
    from reprokit.capture.crash import Ahead
    from reprokit.capture.recent_call import RecentCalls


class TrialState:
    """The trial's recorded state; the router, the probe and the graph runner update it."""

    def __init__(self, spec: TrialSpec, trial_dir: str):
        self.spec = spec
        self.dir = trial_dir
        self.spec_path = ""  # the spec's file: processes the script starts read it again (child.ranks)
        self.graphs = 0
        self.compiled = False
        self.user_backend: str | None = None
        self.compile_args: dict[str, Any] | None = None
        self.counters: dict = {}
        self.bisect_detail: str | None = None
        self.lowering_ops: list = []  # the op each inductor lowering application lowered, in order
        self.failed_graph: int | None = None
        self.failing_saved = False  # spec.capture_failing: the first graph that raised is saved, once
        self.accuracy_failure: str | None = None
        self.flag_values: dict | None = None
        self.user_configs: dict | None = None
        self.config_defaults: dict | None = None
        self.numerics: dict | None = None  # torch's version and its numerics modes' values (bisect/numerics)
        self.note = ""
        self.longest_compile = 0.0  # seconds of the longest backend compile that finished (child/compile_limit)
        self.replayed: list = []  # C++ compile errors replayed from this run's identical compiles (child/compile_errors)
        self.backward_ran: set[int] = set()
        self.pieces: list = []  # inductor compiles the user's own backend asked for, in order
        self.export: dict[str, Any] | None = (
            None  # the deployment path (child.export_router): entry points called, phase that failed
        )
        # The first exception a compiled call raised, even one the script caught (child/caught.py): an exit after
        # it is that failure.
        self.caught: BaseException | None = None
        self.ahead: Ahead | None = None  # spec.capture_failing: graphs written ahead of a crash (capture.crash.Ahead)
        self.recent: RecentCalls | None = None  # spec.capture_failing: each graph's latest call (capture/recent_call)

    def mark(self, text: str) -> None:
        """Say which graph is compiling or running ("" for none), where a crash leaves it (capture/crash.py)."""
        if self.ahead is not None:
            self.ahead.marker.set(text)

    def save_state(self) -> None:
        """state.json as of now (atomic: a kill mid-write leaves the previous one)."""
        write_json_atomic(os.path.join(self.dir, "state.json"), self.state())

    def state(self) -> dict:
        """The recorded state as plain data."""
        return {
            "graphs": self.graphs,
            "compiled": self.compiled,
            "user_backend": self.user_backend,
            "compile_args": self.compile_args,
            "counters": {f"{b}/{s}": n for (b, s), n in self.counters.items()},
            "bisect_detail": self.bisect_detail,
            "lowering_ops": self.lowering_ops,
            "failed_graph": self.failed_graph,
            "flag_values": self.flag_values,
            "user_configs": self.user_configs,
            "config_defaults": self.config_defaults,
            "numerics": self.numerics,
            "backward_graphs": sorted(self.backward_ran),
            "inductor_pieces": self.pieces,
            "note": self.note,
            "longest_compile": self.longest_compile,
            "export": self.export,
            "compile_errors_replayed": self.replayed,
        }

    def record_compile(self, backend_name: str, mode, options, dynamic, fullgraph) -> None:
        """The script called torch.compile (or torch._dynamo.optimize) with these arguments."""
        self.compiled = True
        self.user_backend = backend_name
        self.compile_args = {
            "backend": backend_name,
            "mode": mode,
            "options": plain(options),
            "dynamic": dynamic,
            "fullgraph": fullgraph,
        }
        # At once: Dynamo may hang or crash tracing before any graph reaches the router, and the parent must
        # still know that torch.compile was called (a failure of Dynamo, not a script without compile).
        self.save_state()

    def record_piece(self, gm, error: BaseException | None = None) -> None:
        """The user's backend had inductor compile `gm` (a piece of its graph), or (error) that compile raised.
        Saved at once: a crash or hang in the piece's compile leaves it as the last one recorded."""
        if error is not None and self.pieces:
            from reprokit.data.signature import root_cause

            name, message, _ = root_cause(error)  # the cause behind inductor's wrappers
            lines = message.strip().splitlines()
            self.pieces[-1]["failed"] = name + (f": {lines[0][:200]}" if lines else "")
        else:
            ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
            self.pieces.append(
                {
                    "piece": len(self.pieces) + 1,
                    "graph": self.graphs - 1,
                    "nodes": len(ops),
                    "ops": sorted(set(ops)),
                    "failed": None,
                }
            )
        self.save_state()

    def fail(self, k: int, accuracy: str | None = None) -> None:
        """Graph k failed (to compile, to run, or to match eager): remember which, at once."""
        self.failed_graph = k
        if accuracy is not None:
            self.accuracy_failure = accuracy
        self.save_state()

    def save_graph_code(self, k: int, gm) -> None:
        """graphs/graph_<k>.py: the code of the k-th graph Dynamo handed over."""
        path = os.path.join(self.dir, "graphs", f"graph_{k}.py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(gm.code)

    def record_configs(self, options) -> None:
        """The inductor flags in force (the user's options win), and the user's non-default compiler config."""
        import torch

        from reprokit import torch_config
        from reprokit.data.stages import INDUCTOR_FLAGS, NUMERICS_CONFIG

        values = torch_config.inductor_config_values(INDUCTOR_FLAGS)
        # Which numerics modes this torch has: an entry it lacks is left out (2.13 has no `numerics`).
        self.numerics = {
            "torch": torch.__version__.split("+")[0],
            **torch_config.inductor_config_values(NUMERICS_CONFIG),
        }
        for name, value in (options or {}).items():
            if name in values:
                values[name] = value
        self.flag_values = {k: v for k, v in values.items() if isinstance(v, bool)}
        self.user_configs = torch_config.non_default_configs()
        self.config_defaults = torch_config.config_defaults(self.user_configs)


def plain(value):
    """value when it is JSON, else its repr (options may hold callables)."""
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def peak_memory() -> dict:
    """This process's peak memory so far: resident set (ru_maxrss) in MiB, and CUDA's peak allocation when
    CUDA is in use. A fork of the warm worker starts from the worker's resident set, as every trial does."""
    import resource
    import sys

    peak = {"rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            peak["cuda_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    except Exception:  # a broken CUDA context must not cost the trial its result
        pass
    return peak
