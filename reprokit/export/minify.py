"""The export path's minifier: the program AOTInductor failed on, cut to the fewest nodes that still fail the
same way when exported and AOT-compiled again, written as repro.py and verified in a fresh interpreter.

The program is captured by one trial of the failing stage (child.export_case); candidates are cut from it here,
as text: a contiguous run of nodes, the values it reads from outside made inputs (synthetic, of the captured
shapes and dtypes). Each candidate runs as a script trial of its own.
"""

from __future__ import annotations

import dataclasses
import os
import time

from reprokit import __version__
from reprokit.bisect.session import Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt, text_hash
from reprokit.data.rundir import RunDir, read_json
from reprokit.data.signature import Signature
from reprokit.data.trial_files import trial_record
from reprokit.fx.prelude import prelude_for
from reprokit.report.render import environment
from reprokit.search import find_boundary

NO_SHAPE = "a value it needs has no shape to make an input from"
_DTYPES_INT = ("torch.int", "torch.uint", "torch.long", "torch.short")
# Config a trial's environment sets (trial.environment.trial_env), not the script: not the repro's to carry.
_SET_BY_REPROKIT = ("fx_graph_cache", "autograd_cache")


def minify_export(s: Session, run_dir: RunDir, isolation: Isolation, command: str = "") -> Repro:
    """Capture the program, cut it, write repro.py: the exported program's Repro (or, in its attempt, why not)."""
    started, before = time.monotonic(), s.runner.executed
    capture = s.runner(s.spec("user", "export-capture", save_graph=0))
    path = os.path.join(capture.trial_dir, "case", "export_graph.json")
    if not os.path.exists(path):
        why = "the program AOTInductor was given was not captured" + (f" ({capture.note})" if capture.note else "")
        return Repro(attempts=(ReproAttempt("export_graph", why),), message=isolation.message)
    graph = read_json(path)
    maker = CandidateMaker(s, run_dir, isolation, graph, configs(trial_record(capture.trial_dir)), command)
    n = len(graph["nodes"])
    width_ = s.runner.jobs
    end = find_boundary(
        lambda j: maker.fails([(0, j)])[0],
        lo=-1,
        hi=n - 1,
        width=width_,
        fails_many=lambda js: maker.fails([(0, j) for j in js]),
    )
    width = find_boundary(
        lambda k: maker.fails([(end - k, end)])[0],
        lo=-1,
        hi=end,
        width=width_,
        fails_many=lambda ks: maker.fails([(end - k, end) for k in ks]),
    )
    text = maker.text(end - width, end)
    if text is None:  # no cut failed alone, and the whole program (the search's fall-back) cannot be written
        why = "no cut of the program can be written: " + NO_SHAPE
        return Repro(attempts=(ReproAttempt("export_graph", why),), message=isolation.message)
    final = os.path.join(run_dir.path, "repro.py")
    with open(final, "w") as f:
        f.write(text)
    verified = s.runner(maker.spec(final, text, "verify-repro", fresh=True))
    same = maker.same(verified)
    said = "verified" if same else f"the cut program does not fail the same way ({verified.signature.short()})"
    return Repro(
        kind="export_graph",
        path=final,
        verified=same,
        fresh_runs=1,
        signature=verified.signature.to_dict(),
        nodes_before=n,
        nodes_after=width + 1,
        attempts=(ReproAttempt("export_graph", said),),
        trials=s.runner.executed - before,
        seconds=round(time.monotonic() - started, 2),
        message=isolation.message,
    )


def configs(record: dict) -> list:
    """Lines setting the inductor config the script changed (a planted bug, a flag), as the script did."""
    prefix = "torch._inductor.config."
    return [
        f"{name} = {value!r}"
        for name, value in sorted((record.get("user_configs") or {}).items())
        if name.startswith(prefix)
        and name[len(prefix) :] not in _SET_BY_REPROKIT
        and isinstance(value, (bool, int, float, str, type(None)))
    ]


class CandidateMaker:
    """Candidate repros cut from the captured program, and the same-failure oracle over them."""

    def __init__(self, s: Session, run_dir: RunDir, v: Isolation, graph: dict, config_lines: list, command: str):
        self.s, self.run_dir, self.v, self.graph = s, run_dir, v, graph
        self.config_lines, self.command = config_lines, command
        self.meta = {p["name"]: p for p in graph["placeholders"]}
        self.meta.update({n["name"]: n for n in graph["nodes"]})
        with open(v.script) as f:
            ops = sorted(
                {n["code"].split("torch.ops.", 1)[1].split(".")[0] for n in graph["nodes"] if "torch.ops." in n["code"]}
                - {"aten", "prims", "higher_order"}
            )
            self.prelude = prelude_for(f.read(), op_namespaces=ops) if ops else None
        self.folder = os.path.join(run_dir.path, "export_candidates")
        os.makedirs(self.folder, exist_ok=True)

    def text(self, i: int, j: int) -> str | None:
        """repro.py for nodes i..j (None: a value it needs has no shape to make an input from)."""
        kept = self.graph["nodes"][i : j + 1]
        defined = {n["name"] for n in kept}
        args = []
        for n in kept:
            args += [u for u in n["uses"] if u not in defined and u not in args]
        if any("shape" not in self.meta.get(a, {}) for a in args) or "shape" not in kept[-1]:
            return None
        return (
            environment()
            .get_template("export_repro.py.j2")
            .render(
                reprokit_version=__version__,
                command=self.command,
                stage=self.v.failing_stage,
                expected=Signature.from_dict(self.v.signature).said()[:150],
                nodes=len(kept),
                original_nodes=len(self.graph["nodes"]),
                config_lines=self.config_lines,
                prelude=self.prelude,
                args=args,
                body=[n["code"] for n in kept],
                output=kept[-1]["name"],
                inputs=[input_expr(self.meta[a]) for a in args],
                strided=any(self.meta[a].get("stride") for a in args),
            )
        )

    def spec(self, path: str, text: str, label: str, fresh: bool = False):
        """A script trial of one candidate repro, run from its own folder."""
        return dataclasses.replace(
            self.s.spec("user", label),
            script=path,
            script_hash=text_hash(text),
            argv=(),
            cwd=os.path.dirname(path),
            fresh_interpreter=fresh,
        )

    def fails(self, cuts: list) -> list:
        """For each (i, j): whether nodes i..j, exported and AOT-compiled alone, fail the original's way."""
        specs = {}
        for i, j in cuts:
            text = self.text(i, j) if 0 <= i <= j else None
            if text is not None:
                path = os.path.join(self.folder, f"nodes_{i}_{j}.py")
                with open(path, "w") as f:
                    f.write(text)
                specs[(i, j)] = self.spec(path, text, f"export-cut-{i}-{j}")
        outcomes = dict(zip(specs, self.s.runner.map(list(specs.values()))))
        return [cut in outcomes and self.same(outcomes[cut]) for cut in cuts]

    def same(self, outcome) -> bool:
        """The original's failure; a wrong result counts whichever check saw it (the script's, the repro's)."""
        target = self.s.target
        assert target is not None  # the original's failure, known before any repro is cut
        if target.matches(outcome.signature):
            return True
        wrong = ("accuracy", "AssertionError")
        return (target.kind in wrong or target.exc_type in wrong) and (
            outcome.kind == OutcomeKind.ACCURACY or outcome.signature.exc_type == "AssertionError"
        )


def input_expr(meta: dict) -> str:
    """An expression making a synthetic input of the value's shape and dtype."""
    shape, dtype = tuple(meta["shape"]), meta["dtype"]
    on = f", device={meta['device']!r}" if meta.get("device") else ""
    if meta.get("stride"):  # the example's layout, a view of a larger buffer as the script's slice was
        size = 1 + sum((n - 1) * st for n, st in zip(shape, meta["stride"]))
        return f"torch.randn({size}, dtype={dtype}{on}).as_strided({shape}, {tuple(meta['stride'])})"
    if dtype == "torch.bool":
        return f"torch.rand({shape}{on}) < 0.5"
    if dtype.startswith(_DTYPES_INT):
        return f"torch.randint(0, 2, {shape}, dtype={dtype}{on})"
    return f"torch.randn({shape}, dtype={dtype}{on})"
