"""Arguments a call does not need and imported names nothing reads (issue 50, item 2). An argument goes where it
equals the callee's default: the script's own def (or class __init__) says it, and for torch only the defaults
below, which no release or setting changes. Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.names import blocks, calls_of, dynamic, reads, same_literal, text

_CONV = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "bias": True, "padding_mode": "zeros"}
_FACTORY = {"requires_grad": False, "pin_memory": False}
# Keyword defaults of torch callables, by the dotted name as a script spells it after `torch.`, `nn.` or `F.`.
TORCH_DEFAULTS: dict[str, dict] = {
    "compile": {"fullgraph": False, "dynamic": None, "backend": "inductor", "mode": None, "disable": False},
    "nn.Linear": {"bias": True},
    "nn.Conv1d": _CONV,
    "nn.Conv2d": _CONV,
    "nn.Conv3d": _CONV,
    "nn.LayerNorm": {"eps": 1e-05, "elementwise_affine": True},
    "nn.Dropout": {"p": 0.5, "inplace": False},
    "nn.ReLU": {"inplace": False},
    "nn.GELU": {"approximate": "none"},
    "nn.functional.gelu": {"approximate": "none"},
    "nn.functional.relu": {"inplace": False},
    "nn.functional.interpolate": {"align_corners": None, "antialias": False},
    "testing.assert_close": {"equal_nan": False, "check_device": True, "check_dtype": True, "check_layout": True},
    "randn": _FACTORY,
    "rand": _FACTORY,
    "zeros": _FACTORY,
    "ones": _FACTORY,
    "empty": _FACTORY,
    "full": _FACTORY,
    "arange": _FACTORY,
    "tensor": {"requires_grad": False},
}
# Reductions whose `keepdim` is False by default, as torch functions and as tensor methods.
KEEPDIM = {"sum", "mean", "amax", "amin", "max", "min", "std", "var", "prod", "any", "all", "norm", "logsumexp"}
_PREFIXES = {"torch.": "", "nn.": "nn.", "F.": "nn.functional.", "torch.nn.functional.": "nn.functional."}


def default_argument_candidates(source: str) -> list:
    """All arguments equal to their default dropped at once first, then each alone."""
    tree = ast.parse(source)
    defs = _script_defaults(tree)
    methods = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    spots = []
    for k, n in enumerate(ast.walk(tree)):
        if isinstance(n, ast.Call):
            defaults = _defaults_of(n, defs, methods)
            spots += [(k, a) for a in _dropped(n, defaults)]
    singles = [c for spot in spots if (c := _without(tree, [spot])) is not None]
    every = _without(tree, spots) if len(spots) > 1 else None
    return list(dict.fromkeys(([every] if every else []) + singles))


def _script_defaults(tree: ast.Module) -> dict:
    """name -> (parameters, {parameter: default}) of the script's top-level defs and classes (their __init__)."""
    out = {}
    for n in tree.body:
        f: ast.stmt | None = n
        skip = 0
        if isinstance(n, ast.ClassDef):
            f = next((m for m in n.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
            skip = 1
        if (
            isinstance(f, ast.FunctionDef)
            and isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and not f.decorator_list
            and not f.args.posonlyargs
        ):
            params = [a.arg for a in f.args.args[skip:]]
            named = dict(zip([a.arg for a in f.args.args][len(f.args.args) - len(f.args.defaults) :], f.args.defaults))
            named.update({a.arg: d for a, d in zip(f.args.kwonlyargs, f.args.kw_defaults) if d is not None})
            out[n.name] = (params, named)
    return out


def _defaults_of(call: ast.Call, defs: dict, methods: set) -> tuple:
    """(positional parameters or None, {keyword: default node}) the call's callee is known to take."""
    name = ast.unparse(call.func)
    if isinstance(call.func, ast.Name) and name in defs:
        return defs[name]
    for prefix, to in _PREFIXES.items():
        if name.startswith(prefix) and (to + name[len(prefix) :]) in TORCH_DEFAULTS:
            known = TORCH_DEFAULTS[to + name[len(prefix) :]]
            return None, {k: ast.Constant(v) for k, v in known.items()}
    attr = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if attr in KEEPDIM and attr not in methods:  # a tensor's reduction, unless the script defines one of that name
        return None, {"keepdim": ast.Constant(False)}
    return None, {}


def _dropped(call: ast.Call, defaults: tuple) -> list:
    """("kw", name) for each keyword equal to its default; ("pos", i) for trailing positionals equal to theirs."""
    params, named = defaults
    out: list[tuple] = [("kw", k.arg) for k in call.keywords if k.arg in named and same_literal(k.value, named[k.arg])]
    if params is not None and not any(isinstance(a, ast.Starred) for a in call.args):
        for i in range(len(call.args) - 1, -1, -1):
            if i < len(params) and params[i] in named and same_literal(call.args[i], named[params[i]]):
                out.append(("pos", i))
            else:
                break
    return out


def _without(tree: ast.Module, spots: list) -> str | None:
    new = copy.deepcopy(tree)
    nodes = list(ast.walk(new))
    for k, (kind, which) in sorted(spots, key=lambda s: (s[0], -s[1][1] if s[1][0] == "pos" else 0)):
        call = nodes[k]
        assert isinstance(call, ast.Call)
        if kind == "kw":
            call.keywords = [a for a in call.keywords if a.arg != which]
        elif which == len(call.args) - 1:
            call.args = call.args[:-1]
    return text(new)


def unused_name_candidates(source: str) -> list:
    """Each imported name nothing reads dropped from its import (`from a import b, c` -> `from a import b`), or
    with it where it is the import's one name."""
    tree = ast.parse(source)
    read = set(reads(tree)) | {
        n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    out = []
    for i, s in enumerate(tree.body):
        if isinstance(s, (ast.Import, ast.ImportFrom)) and len(s.names) == 1 and _unread(s.names[0], read):
            new = copy.deepcopy(tree)
            del new.body[i]
            if (candidate := text(new)) is not None:
                out.append(candidate)
        if isinstance(s, (ast.Import, ast.ImportFrom)) and len(s.names) > 1:
            for j, a in enumerate(s.names):
                if _unread(a, read):
                    new = copy.deepcopy(tree)
                    del new.body[i].names[j]  # type: ignore[attr-defined]
                    if (candidate := text(new)) is not None:
                        out.append(candidate)
    return out


# Names through which a script reads an attribute without writing `.name`: with one of them, every attribute may be read.
_BY_NAME = {"getattr", "hasattr", "vars", "__dict__", "__getattr__", "__getattribute__"}


def unused_attribute_candidates(source: str) -> list:
    """Each `self.x = ...` whose attribute nothing reads (no `.x` anywhere) gone: all at once first, then each
    alone. The common case is a submodule made and never called (`self.norm = nn.LayerNorm(dim)`)."""
    tree = ast.parse(source)
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store)}
    read |= {
        n.target.attr for n in ast.walk(tree) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute)
    }
    if dynamic(tree) or (set(reads(tree)) | read) & _BY_NAME:
        return []
    spots = [
        (b, i)
        for b, (owner, field) in enumerate(blocks(tree))
        for i, stmt in enumerate(getattr(owner, field))
        if _unread_attribute(stmt, read)
    ]
    singles = [c for spot in spots if (c := _without_statements(tree, [spot])) is not None]
    every = _without_statements(tree, spots) if len(spots) > 1 else None
    return list(dict.fromkeys(([every] if every else []) + singles))


def _unread_attribute(stmt: ast.stmt, read: set) -> bool:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    target = stmt.targets[0]
    return (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
        and target.attr not in read
    )


def _without_statements(tree: ast.Module, spots: list) -> str | None:
    """The tree without the statements at (block, index) spots; a block left empty holds `pass`."""
    new = copy.deepcopy(tree)
    lists = [getattr(owner, field) for owner, field in blocks(new)]
    for b, i in sorted(spots, reverse=True):
        del lists[b][i]
    for block in lists:
        if not block:
            block.append(ast.Pass())
    return text(new)


def _unread(alias: ast.alias, read: set) -> bool:
    return alias.name != "*" and (alias.asname or alias.name).split(".")[0] not in read


def unused_parameter_candidates(source: str) -> list:
    """Each parameter a top-level def never reads dropped, with its argument at every call: of the def itself, of
    a name bound to a wrapper of it (`grad_fn = torch.func.grad(loss)`), and of a wrapper made in place
    (`torch.compile(grad_fn)(w, x)`); and each a method never reads, a class's own anywhere in the script, with its
    argument at every call of it (`Probe("mlp")` for `__init__(self, tag)`, `probe.record(x)` for `record`)."""
    tree = ast.parse(source)
    out = []
    for fi, f in enumerate(tree.body):
        if not isinstance(f, ast.FunctionDef) or f.args.vararg or f.args.kwarg or f.args.posonlyargs:
            continue
        used = reads(ast.Module(body=f.body, type_ignores=[]))
        for pi, p in enumerate(f.args.args):
            if p.arg not in used and p.arg != "self":
                new = copy.deepcopy(tree)
                if _drop_parameter(new, fi, pi) and (candidate := text(new)) is not None:
                    out.append(candidate)
    for ci, mi, pi in _unused_method_parameters(tree):
        new = copy.deepcopy(tree)
        if _drop_method_parameter(new, ci, mi, pi) and (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def _classes(tree: ast.AST) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def _unused_method_parameters(tree: ast.Module) -> list:
    """(class, method, parameter) indexes of each parameter after `self` that a plain method never reads."""
    found = []
    for ci, c in enumerate(_classes(tree)):
        for mi, m in enumerate(c.body):
            if not isinstance(m, ast.FunctionDef) or m.decorator_list or m.args.vararg or m.args.kwarg:
                continue
            if m.args.posonlyargs or not m.args.args or m.args.args[0].arg != "self":
                continue
            used = reads(ast.Module(body=m.body, type_ignores=[]))
            found += [(ci, mi, pi) for pi, p in enumerate(m.args.args) if pi and p.arg not in used]
    return found


def _drop_method_parameter(tree: ast.Module, ci: int, mi: int, pi: int) -> bool:
    """Drop it where every call of the method can be told: `__init__` through its class's name (a class no other
    class names as a base), any other method through its attribute name, one no other def or attribute uses."""
    c = _classes(tree)[ci]
    m = c.body[mi]
    assert isinstance(m, ast.FunctionDef)
    if m.name == "__init__":
        found = calls_of(tree, c.name)  # a base of another class, or passed on as a value: calls out of sight
        if found is None:
            return False
        calls = found
    elif m.name.startswith("__"):
        return False
    else:
        defs = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == m.name
        ]
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == m.name]
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.func in uses]
        if len(defs) != 1 or len(calls) != len(uses):
            return False
    return _drop_at_calls(m, pi, calls, pi - 1)


def _drop_parameter(tree: ast.Module, fi: int, pi: int) -> bool:
    f = tree.body[fi]
    assert isinstance(f, ast.FunctionDef)
    name = f.name
    callees = {name} | {
        s.targets[0].id
        for s in tree.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Call)
        and s.value.args[:1]
        and ast.unparse(s.value.args[0]) == name
    }
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _calls_one_of(n, callees)]
    return _drop_at_calls(f, pi, calls, pi)


def _drop_at_calls(f: ast.FunctionDef, pi: int, calls: list, at: int) -> bool:
    """f's parameter pi dropped, and at each call its argument: positional at `at` (a method's calls pass no self),
    or by keyword. Not where a call spreads *args or **kwargs: which argument is the parameter cannot be told."""
    param = f.args.args[pi].arg
    if any(isinstance(a, ast.Starred) for c in calls for a in c.args) or any(
        k.arg is None for c in calls for k in c.keywords
    ):
        return False
    for c in calls:
        c.args = [a for i, a in enumerate(c.args) if i != at]
        c.keywords = [k for k in c.keywords if k.arg != param]
    first_default = len(f.args.args) - len(f.args.defaults)
    if pi >= first_default:
        del f.args.defaults[pi - first_default]
    del f.args.args[pi]
    return True


def _calls_one_of(call: ast.Call, callees: set) -> bool:
    """The call is of one of the names, or of a wrapper made in place of one (`torch.compile(f)(x)`)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in callees
    return isinstance(func, ast.Call) and bool(func.args) and ast.unparse(func.args[0]) in callees
