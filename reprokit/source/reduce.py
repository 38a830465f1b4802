"""Dynamo-stage failures have no graph to cut: reduce the user's script itself, keeping the signature."""
from __future__ import annotations

import ast
import time

from reprokit.data.records import Signature, TrialSpec, Verdict, text_hash
from reprokit.data.rundir import RunDir
from reprokit.search import ddmin, run_to_fixpoint


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


def _single_return_functions(tree: ast.Module) -> dict:
    """name -> (params, return expression) of module-level functions whose body is one `return expr`."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            body = [b for b in node.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            a = node.args
            if (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None
                    and not (a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs)):
                out[node.name] = ([x.arg for x in a.args], body[0].value)
    return out


def inline_candidates(source: str) -> list:
    """Versions of the script with one helper's calls replaced by its return expression (arguments substituted)."""
    import copy

    tree = ast.parse(source)
    out = []
    for name, (params, expr) in _single_return_functions(tree).items():

        class Inline(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                if isinstance(node.func, ast.Name) and node.func.id == name and len(node.args) == len(params) \
                        and not node.keywords:
                    mapping = dict(zip(params, node.args))

                    class Subst(ast.NodeTransformer):
                        def visit_Name(self, n):
                            return copy.deepcopy(mapping[n.id]) if n.id in mapping else n

                    return Subst().visit(copy.deepcopy(expr))
                return node

        new = Inline().visit(copy.deepcopy(tree))
        text = ast.unparse(ast.fix_missing_locations(new)) + "\n"
        if text != ast.unparse(tree) + "\n":
            out.append(text)
    return out


def simplify_candidates(source: str, limit: int = 60) -> list:
    """Versions of the script with one expression replaced by one of its sub-expressions (`a * b` -> `a`,
    `f(x).sin()` -> `f(x)`), outermost first. Statement targets and callee names are left alone."""
    import copy

    tree = ast.parse(source)
    spots = []
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr) and not isinstance(value, (ast.Name, ast.Constant)) and field not in (
                    "func", "targets", "target", "annotation", "returns"):
                for child in ast.iter_child_nodes(value):
                    if isinstance(child, ast.expr) and not isinstance(child, (ast.Load, ast.Store)) and (
                            not isinstance(value, ast.Call) or child is not value.func):
                        spots.append((node, field, value, child))
    out = []
    for node, field, value, child in spots[:limit]:
        setattr(node, field, child)
        out.append(ast.unparse(ast.fix_missing_locations(copy.deepcopy(tree))) + "\n")
        setattr(node, field, value)
    return out


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
                               script_hash=text_hash(source)))
        ok = target.matches(out.signature)
        if ok and len(source) < len(best["source"]):
            best["source"] = source
            run.write_text("repro.py", source)
        return ok

    def delete_statements(source: str) -> str:
        paths = statements(ast.parse(source))
        keep = ddmin(paths, lambda kept: fails(without(source, set(paths) - set(kept))))
        return without(source, set(paths) - set(keep)) or source

    def first_that_fails(candidates) -> str | None:
        return next((c for c in candidates if len(c) < len(best["source"]) + 200 and fails(c)), None)

    def inline_helpers(source: str) -> str:
        while (found := first_that_fails(inline_candidates(source))) is not None:
            source = found
        return source

    def simplify_expressions(source: str) -> str:
        while (found := first_that_fails([c for c in simplify_candidates(source) if len(c) < len(source)])) is not None:
            source = found
        return source

    emit("minify_start", graph="source", nodes=len(original.splitlines()))
    if not fails(best["source"]):
        v.repro_verified = False
        v.message = "the script, re-printed from its AST, no longer fails the same way: source not reduced"
        run.write_json("verdict.json", v.to_dict())
        return v
    result = run_to_fixpoint(best["source"], [delete_statements, inline_helpers, simplify_expressions], size=len)
    run.write_text("repro.py", result)
    checks = runner.map([TrialSpec(mode="script", stage="user", script=run.file("repro.py"), cwd=opts["cwd"],
                                   argv=tuple(v.argv), attempt=i, label=f"verify-repro-{i}",
                                   script_hash=text_hash(result), fresh_interpreter=True) for i in range(2)])
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
