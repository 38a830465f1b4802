"""Module layers a repro does without (issue 50, item 2): a forward parameter that no call needs goes with its
argument wherever an instance is called, and a module whose forward only calls one submodule on its input becomes
that submodule (`TinyBlock()` -> `nn.Linear(1, 1)`). Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.inline import _bind
from reprokit.source.names import calls_of, dynamic, reads, text


def forward_parameter_candidates(source: str) -> list:
    """Each forward parameter its body never reads, dropped with its argument at every call of an instance: a name
    bound to `M(...)` (or to an expression of such a name, `torch.compile(model)`), and the parameters it is
    passed to (`denoise(model, 1)`)."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for ci, cls in enumerate(_modules(tree)):
        forward = _method(cls, "forward")
        if forward is None or forward.args.vararg or forward.args.kwarg or forward.decorator_list:
            continue
        used = reads(ast.Module(body=forward.body, type_ignores=[]))
        for pi, p in enumerate(forward.args.args[1:], start=1):
            if p.arg in used:
                continue
            new = copy.deepcopy(tree)
            new_forward = _method(_modules(new)[ci], "forward")
            assert new_forward is not None
            if _drop_argument(new, _modules(new)[ci].name, pi - 1, p.arg):
                del new_forward.args.args[pi]
                if (candidate := text(new)) is not None:
                    out.append(candidate)
    return out


def layer_candidates(source: str) -> list:
    """A module whose __init__ sets one submodule and whose forward returns it called on the one input: each
    `M(...)` becomes the submodule's expression (its __init__ parameters bound), and the class goes."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for k, cls in enumerate(tree.body):
        if not isinstance(cls, ast.ClassDef) or cls not in _modules(tree):
            continue
        made = _one_layer(cls)
        if made is None or calls_of(tree, cls.name) is None:
            continue
        init, expr = made
        new = copy.deepcopy(tree)
        del new.body[k]
        replaced = _layer_made(new, cls.name, init, expr)
        if replaced is not None and (candidate := text(replaced)) is not None:
            out.append(candidate)
    return out


def _layer_made(tree: ast.Module, name: str, init: ast.FunctionDef, expr: ast.expr) -> ast.Module | None:
    """Each `name(...)` replaced by the layer's expression, the call's arguments bound to __init__'s parameters;
    None where a call's arguments do not bind."""
    params = [a.arg for a in init.args.args[1:]]
    ok = True

    class Replace(ast.NodeTransformer):
        def visit_Call(self, n):
            nonlocal ok
            self.generic_visit(n)
            if not (isinstance(n.func, ast.Name) and n.func.id == name):
                return n
            bound = _bind(params, init.args.defaults, list(n.args), n.keywords)
            if bound is None:
                ok = False
                return n
            return _substituted(expr, bound)

    new = Replace().visit(tree)
    return new if ok else None


def _modules(tree: ast.AST) -> list:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef) and any(ast.unparse(b).split(".")[-1] == "Module" for b in n.bases)
    ]


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == name), None)


def _instances(tree: ast.Module, cls: str) -> set:
    """Names that hold an instance of `cls`, as far as the script shows: bound to an expression that makes one
    or names one, and the parameters of a top-level def that a call passes one to."""
    names: set[str] = set()
    defs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    while True:
        before = len(names)
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                if any(_holds(x, cls, names) for x in ast.walk(n.value)):
                    names.add(n.targets[0].id)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs:
                params = [a.arg for a in defs[n.func.id].args.args]
                for i, a in enumerate(n.args[: len(params)]):
                    if isinstance(a, ast.Name) and a.id in names:
                        names.add(params[i])
                names |= {k.arg for k in n.keywords if isinstance(k.value, ast.Name) and k.value.id in names and k.arg}
        if len(names) == before:
            return names


def _holds(x: ast.AST, cls: str, names: set) -> bool:
    return isinstance(x, ast.Name) and (x.id in names or x.id == cls)


def _drop_argument(tree: ast.Module, cls: str, at: int, param: str) -> bool:
    """The argument at `at` (or keyword `param`) dropped from every call of an instance; False where a call does
    not give it or spreads *args/**kwargs, or where there is no call to see."""
    names = _instances(tree, cls)
    calls = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        callee = n.func
        if isinstance(callee, ast.Call) and callee.args and isinstance(callee.args[0], ast.Name):
            callee = callee.args[0]  # torch.compile(model)(x)
        if isinstance(callee, ast.Name) and callee.id in names:
            calls.append(n)
    if not calls:
        return False
    for c in calls:
        if any(isinstance(a, ast.Starred) for a in c.args) or any(k.arg is None for k in c.keywords):
            return False
        if len(c.args) <= at and not any(k.arg == param for k in c.keywords):
            return False
    for c in calls:
        c.args = [a for i, a in enumerate(c.args) if i != at]
        c.keywords = [k for k in c.keywords if k.arg != param]
    return True


def _one_layer(cls: ast.ClassDef):
    """(__init__, the submodule's expression) when the class is one layer: methods __init__ and forward alone,
    __init__ sets one attribute (besides super().__init__()), forward returns it called on its one parameter."""
    init, forward = _method(cls, "__init__"), _method(cls, "forward")
    body = [s for s in cls.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if init is None or forward is None or len(body) != 2 or init.args.vararg or init.args.kwarg:
        return None
    sets = [s for s in init.body if not (isinstance(s, ast.Expr) and "super(" in ast.unparse(s))]
    if len(sets) != 1 or not isinstance(sets[0], ast.Assign) or len(sets[0].targets) != 1:
        return None
    target = sets[0].targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return None
    params = [a.arg for a in forward.args.args]
    expected = f"return self.{target.attr}({params[1]})" if len(params) == 2 else None
    if len(forward.body) != 1 or ast.unparse(forward.body[0]) != expected:
        return None
    if any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(sets[0].value)):
        return None
    return init, sets[0].value


def _substituted(expr: ast.expr, bound: dict) -> ast.expr:
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in bound and isinstance(n.ctx, ast.Load):
                return copy.deepcopy(bound[n.id])
            return n

    return Sub().visit(copy.deepcopy(expr))
