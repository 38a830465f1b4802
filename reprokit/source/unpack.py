"""Values a repro does without (issue 50, item 2): a def that returns a tuple its every caller unpacks, one
element nobody reads. The element goes from each `return` and each unpacking at once (`return out, counts, log`
with `ref, ref_counts, ref_log = run(f)`, `ref` never read); a call in it stays, as a statement before the
return, since the failure may need that call made (the compiled model's). Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import copy

from reprokit.source.inline import _walk_own
from reprokit.source.names import dynamic, reads, splice, text

# Builtins whose call only builds a value: an element made by one goes without leaving its call behind.
_BUILDS = {"list", "dict", "tuple", "set", "len", "str", "int", "float", "bool", "sorted"}


def tuple_element_candidates(source: str) -> list:
    """One candidate per (top-level def, element) whose element every unpacking binds to a name never read."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    read = reads(tree)
    out = []
    for k, f in enumerate(tree.body):
        arity = _returned_arity(f)
        targets = _unpackings(tree, f.name, arity) if arity else None  # type: ignore[attr-defined]
        if not targets:
            continue
        for j in range(arity):
            if all(isinstance(t.elts[j], ast.Name) and not read[t.elts[j].id] for t in targets):
                new = copy.deepcopy(tree)
                _drop(new, new.body[k], f.name, j)  # type: ignore[arg-type, attr-defined]
                if (candidate := text(new)) is not None:
                    out.append(candidate)
    return out


def _own_returns(f: ast.FunctionDef) -> list:
    """The def's own `return`s, not those of a def or lambda inside it."""
    return [n for s in f.body for n in _walk_own(s) if isinstance(n, ast.Return)]


def _returned_arity(f: ast.stmt) -> int:
    """n when every return of a plain def is a tuple of n (at least 2) with no starred part, else 0."""
    if not isinstance(f, ast.FunctionDef) or f.decorator_list:
        return 0
    returns = _own_returns(f)
    sizes = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else -1 for r in returns}
    starred = any(isinstance(e, ast.Starred) for r in returns if isinstance(r.value, ast.Tuple) for e in r.value.elts)
    return next(iter(sizes)) if len(sizes) == 1 and min(sizes) >= 2 and not starred else 0


def _unpackings(tree: ast.Module, name: str, arity: int) -> list | None:
    """The tuple targets its every call is unpacked into (`a, b = f(x)`, `a, b = torch.compile(f)(x)`), when every
    use of the name is such a call, each of `arity` names; else None."""
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    targets = [s.targets[0] for s in _unpacked(tree, name)]
    if len(targets) != len(uses) or any(len(t.elts) != arity for t in targets):
        return None
    return targets


def _drop(tree: ast.Module, f: ast.FunctionDef, name: str, j: int) -> None:
    for r in _own_returns(f):
        assert isinstance(r.value, ast.Tuple)
        gone = r.value.elts.pop(j)
        if len(r.value.elts) == 1:
            r.value = r.value.elts[0]
        if _calls(gone):
            splice(f, r, [ast.Expr(gone), r])
    for s in _unpacked(tree, name):
        del s.targets[0].elts[j]
        if len(s.targets[0].elts) == 1:
            s.targets[0] = s.targets[0].elts[0]


def _unpacked(tree: ast.Module, name: str) -> list:
    """The assignments that unpack a call of `name` (or of a wrapper made in place of it) into a tuple."""
    out = []
    for s in ast.walk(tree):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple):
            if not isinstance(s.value, ast.Call):
                continue
            callee = s.value.func
            if isinstance(callee, ast.Call) and callee.args:
                callee = callee.args[0]
            if isinstance(callee, ast.Name) and callee.id == name:
                out.append(s)
    return out


def _calls(e: ast.expr) -> bool:
    return any(
        isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _BUILDS) for n in ast.walk(e)
    )
