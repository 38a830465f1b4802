"""Classes a repro does without (issue 50, item 2): an `nn.Module` made once becomes plain code (its __init__'s
parameters and submodules as module-level names, its forward a function of the instance's name, so `m(x)` and
`torch.compile(m)` read as before), and a class goes together with the statements that use it.
Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.inline import _bind
from reprokit.source.names import dynamic, every_name, module_scope, reads, stored, text

MODULE_BASES = {"nn.Module", "torch.nn.Module", "Module"}


def flatten_module_candidates(source: str) -> list:
    """One candidate per nn.Module subclass instantiated once at the top level and used only by calling it (or
    compiling it, or reading its attributes): the class gone, the instance's code in its place."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    out = []
    for ci, cls in enumerate(tree.body):
        if isinstance(cls, ast.ClassDef) and any(ast.unparse(b) in MODULE_BASES for b in cls.bases):
            new = copy.deepcopy(tree)
            if _flatten(new, ci):
                candidate = text(new)
                if candidate is not None:
                    out.append(candidate)
    return out


def remove_class_candidates(source: str) -> list:
    """One candidate per module-level class: it goes, and so does every top-level statement that reads a name
    gone with it (over and over: `m = M()` goes, then `out = m(x)`)."""
    tree = ast.parse(source)
    out = []
    for ci, cls in enumerate(tree.body):
        if not isinstance(cls, ast.ClassDef):
            continue
        gone = {cls.name}
        keep = [s for j, s in enumerate(tree.body) if j != ci]
        while True:
            dropped = [s for s in keep if set(reads(s)) & gone]
            if not dropped:
                break
            for s in dropped:
                gone |= stored(s)
            keep = [s for s in keep if s not in dropped]
        candidate = text(ast.Module(body=keep or [ast.Pass()], type_ignores=[]))
        if candidate is not None:
            out.append(candidate)
    return out


def _flatten(tree: ast.Module, ci: int) -> bool:
    cls = tree.body[ci]
    assert isinstance(cls, ast.ClassDef)
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    others = [m for m in cls.body if not isinstance(m, ast.FunctionDef)]
    if set(methods) - {"__init__", "forward"} or "forward" not in methods or cls.decorator_list:
        return False
    if any(not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in others):
        return False
    made = [
        i
        for i, s in enumerate(tree.body)
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and _made(s.value, cls) is not None
    ]
    if len(made) != 1 or reads(tree)[cls.name] != 1 + _super_reads(cls):
        return False
    at = made[0]
    stmt = tree.body[at]
    assert isinstance(stmt, ast.Assign)
    call = _made(stmt.value, cls)
    assert call is not None
    instance = stmt.targets[0].id  # type: ignore[attr-defined]
    attrs = _attributes(cls)
    if attrs is None or not _uses_fit(tree, instance, attrs, at):
        return False
    mapping = _attribute_names(tree, instance, attrs)
    outside = module_scope(ast.Module(body=tree.body[:ci] + tree.body[ci + 1 :], type_ignores=[]))
    init = _init_code(methods.get("__init__"), call, mapping, outside)
    if init is None:
        return False
    forward = methods["forward"]
    # The forward itself, renamed for the instance, so every field a Python release gives a def stays.
    fn = copy.copy(forward)
    fn.name, fn.decorator_list = instance, []
    fn.args = copy.copy(forward.args)
    fn.args.args = forward.args.args[1:]
    fn.body = [_selfless(s, mapping) for s in forward.body]
    tree.body[at : at + 1] = init + [fn]
    _outside(tree, instance, mapping)
    del tree.body[ci]
    return True


def _made(value: ast.expr, cls: ast.ClassDef) -> ast.Call | None:
    """The call that makes the instance: `M(...)`, or `M(...).eval()` where eval changes nothing the plain code
    would compute (no method reads `self.training`, __init__ makes no submodule: `nn.Parameter` aside)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == cls.name:
        return value
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "eval"
        and not value.args
        and isinstance(value.func.value, ast.Call)
    ):
        return None
    inner = value.func.value
    training = any(isinstance(n, ast.Attribute) and n.attr == "training" for n in ast.walk(cls))
    submodules = any(
        isinstance(n, ast.Call)
        and ast.unparse(n.func).split(".")[0] in ("nn", "torch")
        and "Parameter" not in ast.unparse(n.func)
        for m in cls.body
        if isinstance(m, ast.FunctionDef) and m.name == "__init__"
        for n in ast.walk(m)
    )
    return _made(inner, cls) if not training and not submodules and inner.func is not value else None


def _super_reads(cls: ast.ClassDef) -> int:
    """Reads of the class's own name inside it (`super(M, self)`)."""
    return sum(reads(m)[cls.name] for m in cls.body)


def _attributes(cls: ast.ClassDef) -> set | None:
    """The attributes __init__ sets on self; None when self is used another way (passed on, a method called)."""
    attrs: set[str] = set()
    for m in cls.body:
        if not isinstance(m, ast.FunctionDef):
            continue
        if not m.args.args or m.args.args[0].arg != "self" or m.decorator_list:
            return None
        parents = {id(c): p for p in ast.walk(m) for c in ast.iter_child_nodes(p)}
        for n in ast.walk(m):
            if isinstance(n, ast.Name) and n.id == "self":
                parent = parents.get(id(n))
                if isinstance(parent, ast.Attribute) and parent.attr not in ("__init__", "training"):
                    if isinstance(parent.ctx, ast.Store):
                        attrs.add(parent.attr)
                elif not _is_super_init(parents, n):
                    return None
    return attrs


def _is_super_init(parents: dict, n: ast.Name) -> bool:
    """`self` as super(M, self)'s argument."""
    call = parents.get(id(n))
    return isinstance(call, ast.Call) and ast.unparse(call.func) == "super"


def _uses_fit(tree: ast.Module, instance: str, attrs: set, at: int) -> bool:
    """Every read of the instance calls it, compiles it or reads one of its attributes, after it is made; and
    nothing else binds its name."""
    if sum(1 for s in tree.body if instance in stored(s)) != 1:
        return False
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for i, s in enumerate(tree.body):
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id == instance and isinstance(n.ctx, ast.Load):
                parent = parents.get(id(n))
                if i <= at:
                    return False
                if isinstance(parent, ast.Call) and (parent.func is n or ast.unparse(parent.func) == "torch.compile"):
                    continue
                if isinstance(parent, ast.Attribute) and parent.attr in attrs and isinstance(parent.ctx, ast.Load):
                    continue
                return False
    return True


def _attribute_names(tree: ast.Module, instance: str, attrs: set) -> dict:
    """attribute -> the plain name it becomes: itself where free, else `<instance>_<attribute>`."""
    taken = every_name(tree, attributes=False)
    out = {}
    for a in sorted(attrs):
        name = a if a not in taken and a != instance else f"{instance}_{a}"
        while name in taken:
            name += "_"
        out[a] = name
        taken.add(name)
    return out


def _init_code(init: ast.FunctionDef | None, call: ast.Call, mapping: dict, outside: set) -> list | None:
    """__init__'s body as top-level statements: parameters bound by assignments, `self.x` as plain names; None
    where a parameter or local would rebind a name the rest of the script uses."""
    if init is None:
        return [] if not call.args and not call.keywords else None
    params = [a.arg for a in init.args.args[1:]]
    if init.args.vararg or init.args.kwarg or init.args.kwonlyargs or init.args.posonlyargs:
        return None
    bound = _bind(params, init.args.defaults, list(call.args), call.keywords)
    if bound is None or set(params) & set(mapping.values()):
        return None
    body = [s for s in init.body if not _super_call(s) and not _docstring(s)]
    own = {n for s in body for n in stored(s)} | set(params)
    if own & outside - {p for p, v in bound.items() if isinstance(v, ast.Name) and v.id == p}:
        return None
    prologue = [
        ast.Assign([ast.Name(p, ast.Store())], v)
        for p, v in bound.items()
        if not (isinstance(v, ast.Name) and v.id == p)
    ]
    return prologue + [_selfless(s, mapping) for s in body]


def _super_call(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and "super(" in ast.unparse(s) and "__init__" in ast.unparse(s)


def _docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _selfless(stmt: ast.stmt, mapping: dict) -> ast.stmt:
    """`self.x` as the plain name of x."""

    class Plain(ast.NodeTransformer):
        def visit_Attribute(self, n):
            self.generic_visit(n)
            if isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr in mapping:
                return ast.copy_location(ast.Name(mapping[n.attr], n.ctx), n)
            return n

    return Plain().visit(copy.deepcopy(stmt))


def _outside(tree: ast.Module, instance: str, mapping: dict) -> None:
    """`m.x` outside the class as the plain name of x."""

    class Plain(ast.NodeTransformer):
        def visit_Attribute(self, n):
            self.generic_visit(n)
            if isinstance(n.value, ast.Name) and n.value.id == instance and n.attr in mapping:
                return ast.copy_location(ast.Name(mapping[n.attr], n.ctx), n)
            return n

    tree.body[:] = [Plain().visit(s) for s in tree.body]
