"""Names a repro does without (issue 50, item 2): a name that only renames another (`da = a`), a parameter no
call gives (its default in its place), an attribute set once to a literal (`self.p = 0.1`), a def that only
forwards its parameters to another callable (`def f(x): return g(x)`), a def handed on once (a lambda there), an
empty class (`object()`), and a `with` the failure may not need.
Each is one candidate the oracle judges. Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.names import calls_of, dynamic, literal, splice, text


def alias_candidates(source: str) -> list:
    """`b = a` in a def's (or the module's) own statements, both names bound nowhere else in it: `b` read as `a`,
    the statement gone (`da = a` then `x + da` reads `x + a`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        for i, s in enumerate(scope.body):
            if _alias(s) and _bound_once(scope, s.targets[0].id, s.value.id):  # type: ignore[attr-defined]
                new = copy.deepcopy(tree)
                new_scope = _same_node(tree, new, scope)
                old, now = new_scope.body[i].targets[0].id, new_scope.body[i].value.id
                del new_scope.body[i]
                _rename_loads(new_scope, old, now)
                if (candidate := text(new)) is not None:
                    out.append(candidate)
    return out


def literal_name_candidates(source: str) -> list:
    """`n = <literal>` in a def's own statements (`dims = [1] + [1]`), `n` bound nowhere else in it: its reads
    become the literal and the statement goes (the constant folding then computes `([1] + [1])[:1]`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for scope in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for i, s in enumerate(scope.body):
            name = _literal_name(s)
            if (
                name is None
                or not _bound_once(scope, name, "")
                or not any(
                    isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(scope)
                )
            ):
                continue
            new = copy.deepcopy(tree)
            new_scope = _same_node(tree, new, scope)
            _replace_loads(new_scope, name, _taken(new_scope, i))
            if (candidate := text(new)) is not None:
                out.append(candidate)
    return out


_LITERAL_PARTS = (ast.Constant, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load)


def _literal_name(stmt: ast.stmt) -> str | None:
    """The name of `name = <literal>`, where the value is made of literals and operators alone."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    return stmt.targets[0].id if all(isinstance(n, _LITERAL_PARTS) for n in ast.walk(stmt.value)) else None


def param_default_candidates(source: str) -> list:
    """A parameter of a top-level def, or of a top-level class's __init__, that no call gives and whose default
    is a literal: its reads become the literal and it goes (`def __init__(self, steps=1)` with `C()`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for k, s in enumerate(tree.body):
        f, skip = _callee(s)
        if f is None or f.args.vararg or f.args.kwarg or f.args.posonlyargs:
            continue
        calls = _all_calls_of(tree, s.name)  # type: ignore[attr-defined]
        if calls is None:
            continue
        first_default = len(f.args.args) - len(f.args.defaults)
        for pi in range(first_default, len(f.args.args)):
            name = f.args.args[pi].arg
            ok, value = literal(f.args.defaults[pi - first_default])
            given = any(len(c.args) > pi - skip or any(kw.arg == name for kw in c.keywords) for c in calls)
            if not ok or given or _stored(f, name):
                continue
            new = copy.deepcopy(tree)
            g, _ = _callee(new.body[k])
            assert g is not None
            del g.args.defaults[pi - first_default]
            del g.args.args[pi]
            _replace_loads(g, name, f.args.defaults[pi - first_default])
            if (candidate := text(new)) is not None:
                out.append(candidate)
    return out


def attribute_constant_candidates(source: str) -> list:
    """`self.p = <literal>` in a class's __init__, `p` set nowhere else and read only as `self.p` in that class:
    its reads become the literal and the assignment goes."""
    tree = ast.parse(source)
    if dynamic(tree) or any(isinstance(n, ast.Name) and n.id in ("setattr", "getattr") for n in ast.walk(tree)):
        return []
    out = []
    for ci, cls in enumerate(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
        for si, s in enumerate(init.body if init else []):
            attr = _self_literal(s)
            if attr is None or not _only_self_reads(tree, cls, attr):
                continue
            new = copy.deepcopy(tree)
            new_cls = [n for n in ast.walk(new) if isinstance(n, ast.ClassDef)][ci]
            new_init = next(m for m in new_cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__")
            _fold_self(new_cls, attr, _taken(new_init, si))
            if (candidate := text(new)) is not None:
                out.append(candidate)
    return out


def _taken(scope: ast.FunctionDef, i: int) -> ast.expr:
    """The value of the assignment at scope.body[i], the assignment gone (`pass` where the body is left empty)."""
    value = scope.body[i].value  # type: ignore[attr-defined]
    del scope.body[i]
    if not scope.body:
        scope.body = [ast.Pass()]
    return value


def forwarder_candidates(source: str) -> list:
    """A top-level def whose body is `return g(p1, ..., pn)` with its own parameters in order, and `g` reads none:
    every use of its name becomes `g`, and the def goes (`_lib.impl("tanh", f)` -> `_lib.impl("tanh", G.apply)`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for k, f in enumerate(tree.body):
        target = _forwarded(f)
        if target is None:
            continue
        new = copy.deepcopy(tree)
        name = new.body[k].name  # type: ignore[attr-defined]
        del new.body[k]
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(new)):
            continue
        _replace_loads(new, name, target)
        if (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def empty_class_candidates(source: str) -> list:
    """A top-level class with nothing in it (`class PhaseConfig: pass`), only ever made without arguments: each
    `PhaseConfig()` becomes `object()` and the class goes."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for k, cls in enumerate(tree.body):
        if not isinstance(cls, ast.ClassDef) or cls.bases or cls.keywords or cls.decorator_list:
            continue
        if any(
            not isinstance(s, ast.Pass) and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            for s in cls.body
        ):
            continue
        calls = calls_of(tree, cls.name)
        if not calls or any(c.args or c.keywords for c in calls):
            continue
        new = copy.deepcopy(tree)
        del new.body[k]
        _replace_loads(new, cls.name, ast.Name("object", ast.Load()))
        if (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def lambda_candidates(source: str) -> list:
    """A def whose body is one `return`, named once and not called there (handed on as a value): a lambda in
    that place, and the def gone (`grad_fn = torch.func.grad(loss)` -> `torch.func.grad(lambda w: ...)`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    out = []
    for k, f in enumerate(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        if f.decorator_list or len(f.body) != 1 or not isinstance(f.body[0], ast.Return) or f.body[0].value is None:
            continue
        if f.args.vararg or f.args.kwarg or f.args.kwonlyargs or f.args.posonlyargs:
            continue
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == f.name]
        if len(uses) != 1 or not isinstance(uses[0].ctx, ast.Load) or id(uses[0]) in {id(n) for n in ast.walk(f)}:
            continue
        parent = parents.get(id(uses[0]))
        if isinstance(parent, ast.Call) and parent.func is uses[0]:
            continue
        new = copy.deepcopy(tree)
        g = [n for n in ast.walk(new) if isinstance(n, ast.FunctionDef)][k]
        body = g.body[0].value  # type: ignore[attr-defined]
        _replace_loads(new, g.name, ast.Lambda(args=g.args, body=body))
        _remove_stmt(new, g)
        if (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def unwrap_with_candidates(source: str) -> list:
    """Each `with` replaced by its body, and each item of a `with` of several dropped: the failure may need none
    of them (`torch.no_grad()` around a compiled call that never asks for a gradient)."""
    tree = ast.parse(source)
    spots = [k for k, n in enumerate(ast.walk(tree)) if isinstance(n, ast.With)]
    out = []
    for k in spots:
        new = copy.deepcopy(tree)
        w = list(ast.walk(new))[k]
        assert isinstance(w, ast.With)
        if splice(new, w, w.body) is not None and (candidate := text(new)) is not None:
            out.append(candidate)
        for j in range(len(w.items) if len(w.items) > 1 else 0):
            new = copy.deepcopy(tree)
            w2 = list(ast.walk(new))[k]
            del w2.items[j]  # type: ignore[attr-defined]
            if (candidate := text(new)) is not None:
                out.append(candidate)
    return out


def _alias(s: ast.stmt) -> bool:
    return (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Name)
        and s.targets[0].id != s.value.id
    )


def _bound_once(scope: ast.AST, new: str, old: str) -> bool:
    """`new` stored once in the scope (this statement), `old` never stored in it but as the scope's own
    parameter, neither a parameter of a def inside it nor declared global or nonlocal."""
    stores = {new: 0, old: 0}
    own = {a.arg for a in scope.args.args + scope.args.kwonlyargs} if isinstance(scope, ast.FunctionDef) else set()
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in stores:
            stores[n.id] += 1
        elif isinstance(n, ast.arg) and n.arg in stores and not (n.arg == old and n.arg in own):
            return False
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and {new, old} & set(n.names):
            return False
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not scope and n.name in stores:
            return False
    return stores[new] == 1 and stores[old] == 0


def _same_node(old_tree: ast.AST, new_tree: ast.AST, node: ast.AST):
    return list(ast.walk(new_tree))[next(i for i, n in enumerate(ast.walk(old_tree)) if n is node)]


def _rename_loads(scope: ast.AST, old: str, new: str) -> None:
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == old and isinstance(n.ctx, ast.Load):
            n.id = new


def _replace_loads(scope: ast.AST, name: str, value: ast.expr) -> None:
    class Replace(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == name and isinstance(n.ctx, ast.Load):
                return ast.copy_location(copy.deepcopy(value), n)
            return n

    Replace().visit(scope)


def _callee(s: ast.stmt):
    """(the def whose parameters a call gives, how many of them a call does not pass): a def, or a class's
    __init__ (its `self`), or (None, 0)."""
    if isinstance(s, ast.FunctionDef) and not s.decorator_list:
        return s, 0
    if isinstance(s, ast.ClassDef):
        init = next((m for m in s.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
        if init is not None and init.args.args and not init.decorator_list:
            return init, 1
    return None, 0


def _all_calls_of(tree: ast.Module, name: str) -> list | None:
    """names.calls_of, none of them spreading *args or **kwargs (which argument is which cannot be told)."""
    calls = calls_of(tree, name)
    if calls is None or any(isinstance(a, ast.Starred) for c in calls for a in c.args):
        return None
    return None if any(k.arg is None for c in calls for k in c.keywords) else calls


def _stored(f: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(f))


def _self_literal(s: ast.stmt) -> str | None:
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute)):
        return None
    t = s.targets[0]
    ok, value = literal(s.value)
    if not ok or not isinstance(t.value, ast.Name) or t.value.id != "self":
        return None
    return t.attr if isinstance(value, (int, float, bool, str, type(None))) else None


def _only_self_reads(tree: ast.Module, cls: ast.ClassDef, attr: str) -> bool:
    """`attr` stored once in the whole script, and read only as `self.attr` inside `cls`."""
    inside = {id(n) for n in ast.walk(cls)}
    stores = 0
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == attr:
            if not isinstance(n.ctx, ast.Load):
                stores += 1
            elif id(n) not in inside or not (isinstance(n.value, ast.Name) and n.value.id == "self"):
                return False
    return stores == 1


def _fold_self(cls: ast.ClassDef, attr: str, value: ast.expr) -> None:
    class Fold(ast.NodeTransformer):
        def visit_Attribute(self, n):
            if n.attr == attr and isinstance(n.value, ast.Name) and n.value.id == "self":
                return ast.copy_location(copy.deepcopy(value), n)
            return self.generic_visit(n)

    Fold().visit(cls)


def _forwarded(f: ast.stmt) -> ast.expr | None:
    """What a plain def forwards to: `def f(a, b): return g(a, b)` -> `g`."""
    if not isinstance(f, ast.FunctionDef) or f.decorator_list or len(f.body) != 1:
        return None
    a = f.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
        return None
    ret = f.body[0]
    if not isinstance(ret, ast.Return) or not isinstance(ret.value, ast.Call) or ret.value.keywords:
        return None
    call = ret.value
    params = [p.arg for p in a.args]
    if [ast.unparse(x) for x in call.args] != params or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    if any(isinstance(n, ast.Name) and n.id in params + [f.name] for n in ast.walk(call.func)):
        return None
    return call.func


def _remove_stmt(tree: ast.AST, node: ast.stmt) -> None:
    at = splice(tree, node, [])
    if at is not None and at[1] == "body" and not isinstance(at[0], ast.Module) and not getattr(*at):
        getattr(*at).append(ast.Pass())
