"""Statements joined as a person writes them (issue 50, item 2): `if c: return a` then `return b` becomes
`return a if c else b` (a pass: candidate texts out), and two neighbouring assignments of alike short values become
one, `w, g = randn(1), randn(1)` (polish's, on the verified text). Each computes what the two statements did."""

from __future__ import annotations

import ast
import copy
from typing import TypeGuard

from reprokit.source.names import blocks, reads, stored, text

# A joined assignment longer than this is not one a person writes on one line.
WIDEST = 80


def return_choice_candidates(source: str) -> list:
    """One candidate per `if c: return a` followed by `return b` (or with `else: return b`): one return."""
    return _each_spot(source, _return_choice)


def paired(source: str) -> str:
    """Every two neighbouring assignments of one target each, of alike values, whose second value does not read
    the first target joined (`a, b = x, y`), as polish does it: once, on the verified text (a pair made during the
    reduction would hide each half from the passes that take one assignment, and from ddmin)."""
    tree = ast.parse(source)
    for owner, field in list(blocks(tree)):
        block = getattr(owner, field)
        i = 0
        while i < len(block):
            _pair(block, i)  # joined or not, the statement at i pairs no further (a tuple target is not one target)
            i += 1
    return text(tree) or source


def _each_spot(source: str, join) -> list:
    tree = ast.parse(source)
    lists = [getattr(owner, field) for owner, field in blocks(tree)]
    # a shallow try first (a copy of the list, its statements shared): most spots do not fit
    fits = [(b, i) for b, block in enumerate(lists) for i in range(len(block)) if join(list(block), i)]
    out = []
    for b, i in fits:
        new = copy.deepcopy(tree)
        if join(_block(new, b), i) and (candidate := text(new)) is not None:
            out.append(candidate)
    return out


def _block(tree: ast.AST, b: int) -> list:
    owner, field = list(blocks(tree))[b]
    return getattr(owner, field)


def _return_choice(block: list, i: int) -> bool:
    s = block[i]
    if not (isinstance(s, ast.If) and len(s.body) == 1 and isinstance(s.body[0], ast.Return) and s.body[0].value):
        return False
    if s.orelse:
        other = s.orelse[0] if len(s.orelse) == 1 else None
        end = i + 1
    else:
        other = block[i + 1] if i + 1 < len(block) else None
        end = i + 2
    if not (isinstance(other, ast.Return) and other.value is not None):
        return False
    choice = ast.IfExp(test=s.test, body=s.body[0].value, orelse=other.value)
    block[i:end] = [ast.copy_location(ast.Return(value=choice), s)]
    return True


def _pair(block: list, i: int) -> bool:
    if i + 1 >= len(block):
        return False
    first, second = block[i], block[i + 1]
    if not (_one_target(first) and _one_target(second)):
        return False
    a, b = first.targets[0], second.targets[0]
    if ast.unparse(a) == ast.unparse(b) or not _alike(first.value, second.value) or _reads_target(second.value, a):
        return False
    joined = ast.copy_location(
        ast.Assign(
            targets=[ast.Tuple([a, b], ast.Store())],
            value=ast.Tuple([first.value, second.value], ast.Load()),
            type_comment=None,
        ),
        first,
    )
    if len(ast.unparse(joined)) > WIDEST:
        return False
    block[i : i + 2] = [joined]
    return True


def _one_target(stmt: ast.stmt) -> TypeGuard[ast.Assign]:
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], (ast.Name, ast.Attribute))
        and not isinstance(stmt.value, ast.Tuple)
    )


def _alike(x: ast.expr, y: ast.expr) -> bool:
    """Values a person names on one line: two calls of one callee (`torch.randn(1), torch.randn(1)`), two
    literals, two displays of one kind."""
    if isinstance(x, ast.Call) and isinstance(y, ast.Call):
        return ast.unparse(x.func) == ast.unparse(y.func)
    return type(x) is type(y) and isinstance(x, (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.Set))


def _reads_target(value: ast.expr, target: ast.expr) -> bool:
    """The value reads what the target binds: the name, or the attribute's owner (`self.a = 1; self.b = self.a`)."""
    if isinstance(target, ast.Name):
        return target.id in reads(value) or target.id in stored(value)
    assert isinstance(target, ast.Attribute)
    owner = ast.unparse(target.value)
    return any(ast.unparse(n) == owner for n in ast.walk(value))
