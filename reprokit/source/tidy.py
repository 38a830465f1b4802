"""A reduced script made to read like code a person wrote (issue 50, item 7): each edit is a smaller candidate that
the source reduction keeps only while it fails the same way. A try/except that turns the torch error into an exit
is unwrapped, or its handler raises again (child/caught.py makes the raised error the same failure); empty
`else: pass` and `finally: pass` blocks go; the `if __name__ == "__main__":` guard is dedented; a `main()` called
once is inlined; a name assigned and never read loses its assignment (its call kept as a statement); an import
nothing reads goes, and so does the module docstring.
Plain text in, candidate texts out; nothing is run here."""

from __future__ import annotations

import ast
import copy

from reprokit.source.edits import EXITS

# How many single edits one sweep proposes besides all of them at once: a script full of unused names is ddmin's.
MOST_SINGLE = 12


def tidy_candidates(source: str) -> list:
    """All the edits at once first (one trial when they all hold), then each edit alone, each text smaller."""
    singles = [text for edit in _edits(ast.parse(source)) if (text := _apply(source, [edit])) is not None]
    singles = [t for t in dict.fromkeys(singles) if len(t) < len(source)][:MOST_SINGLE]
    every = _apply_all(source)
    first = [every] if every is not None and len(every) < len(source) and every not in singles else []
    return first + singles


def _apply_all(source: str) -> str | None:
    """Every edit, again on the result until none is left (a dedented guard's `main()` is then inlined)."""
    text = source
    for _ in range(40):
        edits = _edits(ast.parse(text))
        if not edits:
            break
        # One edit per round, the first that applies: the others' paths refer to the tree before it applied.
        new = next((t for edit in edits if (t := _apply(text, [edit])) not in (None, text)), None)
        if new is None:
            break
        text = new
    return text if text != source else None


def _apply(source: str, edits: list) -> str | None:
    tree = ast.parse(source)
    for edit in edits:
        edit(tree)
    _drop_extra_pass(tree)
    try:
        text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        compile(text, "<candidate>", "exec")  # a `return` inlined to the top level is no script
    except (SyntaxError, ValueError):
        return None
    return text


def _edits(tree: ast.Module) -> list:
    """Each edit as a function of a fresh parse of the same text (it finds its node again by position)."""
    out = []
    if ast.get_docstring(tree, clean=False) is not None:
        out.append(lambda t: t.body.pop(0))
    for path, node in _blocks(tree):
        if isinstance(node, ast.Try) and node.handlers + node.finalbody:
            out.append(_at(path, lambda n: n.body + n.orelse + n.finalbody))
        if isinstance(node, ast.Try) and any(map(_exits, node.handlers)):
            # Where the wrapper cannot go, the handler that turned the error into an exit raises it again.
            out.append(_at(path, lambda n: [_replaced(n, handlers=[_reraising(h) for h in n.handlers])]))
        if isinstance(node, (ast.Try, ast.For, ast.While, ast.If)) and _empty(node.orelse):
            out.append(_at(path, lambda n: [_replaced(n, orelse=[])]))
        if isinstance(node, ast.Try) and _empty(node.finalbody) and node.handlers:
            out.append(_at(path, lambda n: [_replaced(n, finalbody=[])]))
        if isinstance(node, ast.If) and len(path) == 1 and "__main__" in ast.unparse(node.test):
            out.append(_at(path, lambda n: n.body))
    out += _inline_main(tree) + _dead_assignments(tree) + _unused_imports(tree)
    return out


def _blocks(tree: ast.Module):
    """(path, statement) of every statement: path is the (field, index) steps from the module."""

    def walk(node, path):
        for field in ("body", "orelse", "finalbody"):
            for i, child in enumerate(getattr(node, field, None) or []):
                if isinstance(child, ast.stmt):
                    yield path + ((field, i),), child
                    yield from walk(child, path + ((field, i),))
        for j, handler in enumerate(getattr(node, "handlers", None) or []):
            for i, child in enumerate(handler.body):
                yield path + (("handlers", j), ("body", i)), child
                yield from walk(child, path + (("handlers", j), ("body", i)))

    yield from walk(tree, ())


def _at(path: tuple, replace):
    """An edit: the statement at `path` replaced by the statements replace(statement) returns."""

    def edit(tree):
        owner = tree
        for field, i in path[:-1]:
            owner = getattr(owner, field)[i]
        field, i = path[-1]
        block = getattr(owner, field)
        block[i : i + 1] = replace(block[i])

    return edit


def without_empty_blocks(source: str) -> str:
    """`else: pass` and `finally: pass` dropped, a `pass` beside other statements, and an `__init__(self)` that
    only calls `super().__init__()`: they do nothing (Python calls the base class's `__init__` without one), so
    the text runs as before, no trial needed (polish applies it to a verified repro whose share of time ran out
    before tidy removed the one a cut had left, #198190)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        # Not in a decorated class or one given a metaclass: a @dataclass's own __init__ stands in for the
        # generated one, so it does something there.
        if isinstance(node, ast.ClassDef) and not node.decorator_list and not node.keywords:
            node.body = [stmt for stmt in node.body if not _bare_init(stmt)] or [ast.Pass()]
        if isinstance(node, ast.Try) and _empty(node.finalbody) and (node.handlers or node.orelse):
            node.finalbody = []
        if isinstance(node, (ast.If, ast.For, ast.While, ast.Try)) and _empty(node.orelse):
            node.orelse = []
    _drop_extra_pass(tree)
    return ast.unparse(tree) + "\n"


def _bare_init(stmt: ast.stmt) -> bool:
    """`def __init__(self): super().__init__()`, docstring or not: the base class's `__init__` called as is."""
    if not (isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__" and not stmt.decorator_list):
        return False
    args = stmt.args
    if args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg or len(args.args) != 1:
        return False
    body = stmt.body[1:] if ast.get_docstring(stmt, clean=False) is not None else stmt.body
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    call = body[0].value
    return ast.unparse(call) == "super().__init__()"


def _drop_extra_pass(tree: ast.Module) -> None:
    """`pass` beside other statements says nothing (an unwrapped `finally: pass` leaves one)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and len(block) > 1:
                setattr(node, field, [s for s in block if not isinstance(s, ast.Pass)] or block[:1])


def _exits(handler: ast.ExceptHandler) -> bool:
    """The handler's body calls sys.exit (or exit, quit, os._exit)."""
    return any(isinstance(n, ast.Call) and ast.unparse(n.func) in EXITS for s in handler.body for n in ast.walk(s))


def _reraising(handler: ast.ExceptHandler) -> ast.ExceptHandler:
    return _replaced(handler, name=None, body=[ast.Raise()]) if _exits(handler) else handler


def _empty(block: list) -> bool:
    return len(block) == 1 and isinstance(block[0], ast.Pass)


def _replaced(node, **fields):
    new = copy.copy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


def _loads(tree: ast.AST) -> set:
    """Names read anywhere, and names a `global` or `nonlocal` statement or a string annotation may reach."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
    return names


def _dead_assignments(tree: ast.Module) -> list:
    """`name = value` with `name` never read: the statement goes, or only its value stays when it calls anything
    (the call may be the failure: `out = f(x)` becomes `f(x)`)."""
    read = _loads(tree)
    if {"globals", "locals", "vars", "exec", "eval"} & read:
        return []
    out = []
    for path, node in _blocks(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id not in read
        ):
            out.append(_at(path, lambda n: [ast.Expr(n.value)] if _calls(n.value) else []))
        elif _paired(node) and any(t.id not in read for t in node.targets[0].elts):
            out.append(_at(path, lambda n: _read_pairs(n, read)))
    return out


def _paired(node: ast.stmt) -> bool:
    """`a, b = x, y`: names paired with values, none of which reads a name it assigns (`a, b = b, a` swaps)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target, value = node.targets[0], node.value
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts)):
        return False
    names = {t.id for t in target.elts if isinstance(t, ast.Name)}
    return len(names) == len(target.elts) and not names & _loads(value)


def _read_pairs(node: ast.Assign, read: set) -> list:
    """One assignment per name something reads; an unread one's value stays only where it calls anything."""
    out: list[ast.stmt] = []
    assert isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple)
    for target, value in zip(node.targets[0].elts, node.value.elts):
        if isinstance(target, ast.Name) and target.id in read:
            out.append(ast.Assign(targets=[ast.Name(target.id, ast.Store())], value=value))
        elif _calls(value):
            out.append(ast.Expr(value))
    return out


def _calls(value: ast.expr) -> bool:
    """The value calls anything: the call may be the failure, so it stays as a statement (`out = f(x)` -> `f(x)`)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(value))


def _unused_imports(tree: ast.Module) -> list:
    """A module-level import none of whose names is read (a cut left it behind)."""
    read = _loads(tree) | {
        n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    return [
        _at((("body", i),), lambda n: [])
        for i, node in enumerate(tree.body)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not any(a.name == "*" or (a.asname or a.name).split(".")[0] in read for a in node.names)
    ]


def _inline_main(tree: ast.Module) -> list:
    """A module-level function without parameters, called once as a top-level statement and named nowhere else:
    its body in place of the call (a maintainer's repro has no `main()`)."""
    defs = {
        n.name: n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and not n.decorator_list and not _has_params(n.args)
    }
    used: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in defs:
            used[n.id] = used.get(n.id, 0) + 1
    out = []
    for i, stmt in enumerate(tree.body):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in defs
            and used[call.func.id] == 1
            and not call.args + call.keywords
            and tree.body.index(defs[call.func.id]) < i
        ):
            where = tree.body.index(defs[call.func.id])

            def edit(t, at=i, where=where):
                t.body[at : at + 1] = t.body[where].body
                del t.body[where]

            out.append(edit)
    return out


def _has_params(args: ast.arguments) -> bool:
    return bool(args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg)
