"""Functions and methods inlined into their call sites (issue 50, item 2): a call that is a statement of its own
(`f(a)`, `y = f(a)`, `return f(a)`, `y = self.m(a)`) is replaced by the body, its parameters bound by assignments
and its locals renamed where they would meet a name of the caller; a def no longer named anywhere goes with it.
edits.inline_candidates does one-line helpers inside expressions. Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.names import blocks, dynamic, every_name, module_scope, renamed, stored, text

# A method called implicitly (by `m(x)`, by Python) is never deleted, even when no statement names it.
IMPLICIT = {"forward", "__init__", "__call__"}
# At most this many candidates per sweep: one per call site, the first sites first.
MOST = 16


def inline_call_candidates(source: str) -> list:
    """One candidate per statement-level call of a function or method the script defines, the body in its place."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for k in range(len(_sites(tree))):
        # Each candidate edits a copy, whose sites are found again in the same order.
        new = copy.deepcopy(tree)
        if _inline(new, _sites(new)[k]):
            candidate = text(new)
            if candidate is not None and candidate not in out:
                out.append(candidate)
        if len(out) >= MOST:
            break
    return out


def _inlinable(f: ast.stmt) -> bool:
    """A plain def: no decorator, no *args, **kwargs, keyword-only or positional-only parameters, no generator,
    no global or nonlocal, and no return but its last statement."""
    if not isinstance(f, ast.FunctionDef) or f.decorator_list:
        return False
    a = f.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        return False
    inner = [n for s in f.body for n in _walk_own(s)]
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)) for n in inner):
        return False
    returns = [n for n in inner if isinstance(n, ast.Return)]
    return not returns or (len(returns) == 1 and f.body[-1] is returns[0])


def _walk_own(node: ast.AST):
    """ast.walk that does not enter nested defs, lambdas or classes (their returns are their own)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _walk_own(child)


def _sites(tree: ast.Module) -> list:
    """(owner, field, index, callee path) for each statement whose call is a defined function or method."""
    functions = {
        n.name: ("body", i) for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef) and _inlinable(n)
    }
    out = []
    for owner, field in blocks(tree):
        for i, stmt in enumerate(getattr(owner, field)):
            call = _call_of(stmt)
            if call is None:
                continue
            if isinstance(call.func, ast.Name) and call.func.id in functions and owner is not _def(tree, call.func.id):
                out.append((owner, field, i, (functions[call.func.id],)))
            elif _self_call(call):
                path = _method_path(tree, owner, call.func.attr)  # type: ignore[attr-defined]
                if path is not None:
                    out.append((owner, field, i, path))
    return out


def _def(tree: ast.Module, name: str):
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _self_call(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"


def _method_path(tree: ast.Module, owner, name: str):
    """The path of method `name` of the class whose method `owner` is (a call from inside the same class)."""
    for ci, cls in enumerate(tree.body):
        if isinstance(cls, ast.ClassDef) and any(m is owner for m in cls.body):
            for mi, m in enumerate(cls.body):
                if isinstance(m, ast.FunctionDef) and m.name == name and m is not owner and _inlinable(m):
                    if m.args.args and m.args.args[0].arg == "self":
                        return (("body", ci), ("body", mi))
    return None


def _call_of(stmt: ast.stmt) -> ast.Call | None:
    value = None
    if isinstance(stmt, (ast.Expr, ast.Return)):
        value = stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
    if isinstance(value, ast.Call) and not any(isinstance(a, ast.Starred) for a in value.args):
        if all(k.arg is not None for k in value.keywords):
            return value
    return None


def _inline(tree: ast.Module, site: tuple) -> bool:
    """Replace the site's statement by the callee's body."""
    owner, field, i, callee_path = site
    f = _at(tree, callee_path)
    stmt = getattr(owner, field)[i]
    call = _call_of(stmt)
    assert call is not None and isinstance(f, ast.FunctionDef)
    params = [a.arg for a in f.args.args]
    method = len(callee_path) == 2
    given = ([ast.Name("self", ast.Load())] if method else []) + list(call.args)
    bound = _bind(params, f.args.defaults, given, call.keywords)
    if bound is None:
        return False
    body = [s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))] or [ast.Pass()]
    mapping = _renames(tree, f, body, bound, owner is tree)
    new_body = [renamed(s, mapping) for s in body]
    prologue = [
        ast.Assign([ast.Name(mapping.get(p, p), ast.Store())], value)
        for p, value in bound.items()
        if not (isinstance(value, ast.Name) and value.id == mapping.get(p, p))
    ]
    last = new_body[-1]
    if isinstance(last, ast.Return):
        result = last.value or ast.Constant(None)
        new_body[-1] = _with_value(stmt, result)
    elif not isinstance(stmt, ast.Expr):
        new_body.append(_with_value(stmt, ast.Constant(None)))
    getattr(owner, field)[i : i + 1] = prologue + new_body
    _drop_if_unused(tree, callee_path, f.name, method)
    return True


def _with_value(stmt: ast.stmt, value: ast.expr) -> ast.stmt:
    if isinstance(stmt, ast.Expr):
        return ast.Expr(value)
    new = copy.copy(stmt)
    new.value = value  # type: ignore[attr-defined]
    return new


def _bind(params: list, defaults: list, args: list, keywords: list) -> dict | None:
    """parameter -> argument expression, defaults filled in; None when the call does not fit the def."""
    if len(args) > len(params):
        return None
    bound = dict(zip(params, args))
    for k in keywords:
        if k.arg not in params or k.arg in bound:
            return None
        bound[k.arg] = k.value
    for p, d in zip(params[len(params) - len(defaults) :], defaults):
        bound.setdefault(p, d)
    if set(bound) != set(params):
        return None
    return {p: bound[p] for p in params}


def _renames(tree: ast.Module, f: ast.FunctionDef, body: list, bound: dict, module_level: bool) -> dict:
    """The callee's locals that would meet a name used outside it, each renamed `<name>_<callee>` (or numbered)."""
    outside = copy.deepcopy(tree)
    _remove(outside, f)
    # At the top level, the names a module binding meets; inside a def, every name (its scope is not worked out).
    taken = module_scope(outside) if module_level else every_name(outside)
    mine = set(bound) | {n for s in body for n in stored(s)}
    mapping = {}
    for name in sorted(mine):
        arg = bound.get(name)
        if name == "self" or (isinstance(arg, ast.Name) and arg.id == name and name not in _stores(body)):
            continue  # the caller's own name passed on, and never rebound: nothing to keep apart
        if name in taken:
            new, k = f"{name}_{f.name}", 1
            while new in taken or new in mine:
                new, k = f"{name}_{f.name}{k}", k + 1
            mapping[name] = new
            taken.add(new)
    return mapping


def _stores(body: list) -> set:
    return {n for s in body for n in stored(s)}


def _remove(tree: ast.AST, node: ast.AST) -> None:
    for owner, field in list(blocks(tree)):
        block = getattr(owner, field)
        for j, s in enumerate(block):
            if ast.dump(s) == ast.dump(node):
                del block[j]
                return


def _drop_if_unused(tree: ast.Module, path: tuple, name: str, method: bool) -> None:
    """Delete the inlined def when nothing names it any more (a method: no attribute of that name anywhere)."""
    if method:
        if name in IMPLICIT or name.startswith("__"):
            return
        if any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(tree)):
            return
    elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree)):
        return
    owner = _at(tree, path[:-1]) if len(path) > 1 else tree
    block = owner.body  # type: ignore[attr-defined]
    del block[path[-1][1]]
    if not block:
        block.append(ast.Pass())


def _at(tree: ast.AST, path: tuple) -> ast.AST:
    node = tree
    for field, i in path:
        node = getattr(node, field)[i]
    return node
