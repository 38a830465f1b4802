"""Dynamo-stage failures have no graph to cut: reduce the user's script itself, keeping the signature."""
from __future__ import annotations

import ast
import time

from .model import Signature, TrialSpec, Verdict
from .rundir import RunDir
from .search import ddmin, run_to_fixpoint


def statements(tree: ast.Module) -> list:
    """Paths (tuples of (field, index) steps) of every statement, outermost first."""
    out = []

    def walk(node, path):
        for fname in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, fname, None)
            if isinstance(block, list):
                for i, child in enumerate(block):
                    if isinstance(child, (ast.stmt, ast.excepthandler)):
                        p = path + ((fname, i),)
                        if isinstance(child, ast.stmt):
                            out.append(p)
                        walk(child, p)

    walk(tree, ())
    return out


def without(source: str, drop: set) -> str | None:
    """The script with the statements at `drop` removed (an emptied block gets `pass`)."""
    tree = ast.parse(source)

    def rebuild(node, path):
        for fname in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, fname, None)
            if isinstance(block, list):
                kept = []
                for i, child in enumerate(block):
                    p = path + ((fname, i),)
                    if p in drop:
                        continue
                    if isinstance(child, (ast.stmt, ast.excepthandler)):
                        rebuild(child, p)
                    kept.append(child)
                if not kept and fname in ("body", "finalbody") and not isinstance(node, ast.Module):
                    kept = [ast.Pass()]
                setattr(node, fname, kept)

    rebuild(tree, ())
    try:
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    except Exception:
        return None


def minify_source(run: RunDir, v: Verdict, runner, emit, started: float, before: int) -> Verdict:
    """Delete statements (ddmin over the AST, outermost first) while the script fails the same way."""
    target = Signature.from_dict(v.signature)
    with open(v.script) as f:
        original = f.read()
    opts = run.read_json("run.json")["options"]
    candidate_path = run.file("source_candidate.py")
    best = {"source": ast.unparse(ast.parse(original)) + "\n"}

    def fails(source: str | None) -> bool:
        if source is None:
            return False
        run.write_text("source_candidate.py", source)
        out = runner(TrialSpec(mode="script", stage="eager", script=candidate_path, argv=tuple(v.argv),
                               cwd=opts["cwd"], label=f"source-{len(source.splitlines())}l",
                               config={"__source__": source}))
        ok = target.matches(out.signature)
        if ok and len(source) < len(best["source"]):
            best["source"] = source
            run.write_text("repro.py", source)
        return ok

    def one_pass(source: str) -> str:
        paths = statements(ast.parse(source))
        keep = ddmin(paths, lambda kept: fails(without(source, set(paths) - set(kept))))
        return without(source, set(paths) - set(keep)) or source

    emit("minify_start", graph="source", nodes=len(original.splitlines()))
    if not fails(best["source"]):
        v.repro_verified = False
        v.message = "the script, re-printed from its AST, no longer fails the same way: source not reduced"
        run.write_json("verdict.json", v.to_dict())
        return v
    result = run_to_fixpoint(best["source"], [one_pass], size=len)
    run.write_text("repro.py", result)
    checks = runner.map([TrialSpec(mode="script", stage="user", script=run.file("repro.py"), cwd=opts["cwd"],
                                   argv=tuple(v.argv), attempt=i, label=f"verify-repro-{i}",
                                   config={"__repro__": result}) for i in range(2)])
    v.repro = run.file("repro.py")
    v.repro_verified = all(c is not None and target.matches(c.signature) for c in checks)
    v.repro_signature = checks[0].signature.to_dict() if checks[0] else None
    v.nodes = {"original": len(original.strip().splitlines()), "minified": len(result.strip().splitlines()),
               "unit": "lines"}
    v.minify_trials = runner.executed - before
    v.minify_seconds = round(time.monotonic() - started, 2)
    run.write_json("verdict.json", v.to_dict())
    emit("minified", before=v.nodes["original"], after=v.nodes["minified"], trials=v.minify_trials,
         seconds=v.minify_seconds, verified=v.repro_verified)
    return v
