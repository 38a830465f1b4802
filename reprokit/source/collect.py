"""Bookkeeping a repro does without (issue 50, item 2): a list, dict or set made empty and only ever added to, never
read (`scores = []` then `scores.append(next(gen))`), and a loop's count nobody reads (`for i, x in enumerate(xs)`).
The collection goes, and what each addition computed stays as a statement (`next(gen)`), since the failure may
need the call made; the loop runs over `xs` itself. Plain text in, candidate texts out."""

from __future__ import annotations

import ast
import collections
import copy

from reprokit.source.names import dynamic, reads, splice, text

_EMPTY_CALLS = {"list", "dict", "set"}
_ADDS = {"append", "add", "extend", "update", "insert"}


def collection_candidates(source: str) -> list:
    """One candidate per name bound once to an empty collection whose every other use adds to it."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    uses = collections.Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    statements = [s for s in ast.walk(tree) if isinstance(s, ast.stmt)]
    out = []
    for _, made, adds in _collections(tree, uses):
        new = copy.deepcopy(tree)
        # the copy's statements, found by their place in the walk (a deep copy walks in the same order)
        twin = dict(zip(map(id, statements), (s for s in ast.walk(new) if isinstance(s, ast.stmt))))
        done = splice(new, twin[id(made)], []) is not None
        for stmt, value in adds:
            kept = [] if isinstance(value, (ast.Name, ast.Constant)) else [ast.Expr(value=copy.deepcopy(value))]
            done = done and splice(new, twin[id(stmt)], kept) is not None
        if done and (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def _collections(tree: ast.Module, uses: collections.Counter) -> list:
    """(name, the statement that makes it, [(each statement adding to it, the value it adds)])."""
    adding = _additions(tree)
    found = []
    for s in ast.walk(tree):
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            continue
        name = s.targets[0].id
        if not _empty(s.value):
            continue
        adds = [(stmt, value) for stmt, value, n in adding if n == name]
        # every use of the name is this binding or one of the additions: nothing reads the collection
        if adds and uses[name] == 1 + len(adds):
            found.append((name, s, adds))
    return found


def _additions(tree: ast.Module) -> list:
    """(statement, value added, collection name) for `c.append(v)`-like calls and `c[k] = v`, each a statement."""
    out: list[tuple[ast.stmt, ast.expr, str]] = []
    for s in ast.walk(tree):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            args = s.value.args
            # `c.insert(i, v)` adds v at a plain place; the others take the value alone
            plain = len(args) == 1 or (len(args) == 2 and isinstance(args[0], (ast.Name, ast.Constant)))
            if isinstance(f, ast.Attribute) and f.attr in _ADDS and isinstance(f.value, ast.Name) and args:
                if plain and not s.value.keywords:
                    out.append((s, args[-1], f.value.id))
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            # `c[k] = v` with a key that computes nothing
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                if isinstance(t.slice, (ast.Name, ast.Constant)):
                    out.append((s, s.value, t.value.id))
    return out


def _empty(node: ast.AST) -> bool:
    """`[]`, `{}`, `list()`, `dict()`, `set()`."""
    if isinstance(node, (ast.List, ast.Dict)):
        return not (node.elts if isinstance(node, ast.List) else node.keys)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _EMPTY_CALLS
        and not node.args
        and not node.keywords
    )


def enumerate_candidates(source: str) -> list:
    """One candidate per `for i, x in enumerate(xs)` whose `i` nothing reads: `for x in xs`."""
    tree = ast.parse(source)
    if dynamic(tree):
        return []
    read = reads(tree)
    spots = [k for k, n in enumerate(ast.walk(tree)) if _unread_count(n, read)]
    out = []
    for k in spots:
        new = copy.deepcopy(tree)
        loop = list(ast.walk(new))[k]
        assert isinstance(loop, (ast.For, ast.comprehension))
        loop.target = loop.target.elts[1]  # type: ignore[attr-defined]
        loop.iter = loop.iter.args[0]  # type: ignore[attr-defined]
        if (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def _unread_count(n: ast.AST, read) -> bool:
    """A loop (or comprehension) over `enumerate(xs)` alone, unpacked into a count nobody reads and a value."""
    if not isinstance(n, (ast.For, ast.comprehension)):
        return False
    it, target = n.iter, n.target
    return (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "enumerate"
        and len(it.args) == 1
        and not it.keywords
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and isinstance(target.elts[0], ast.Name)
        and not read[target.elts[0].id]
    )
